"""Start at login: real files in a private XDG_CONFIG_HOME / HOME, read back as the OS would."""

from __future__ import annotations

import configparser
import plistlib
import sys
from pathlib import Path

import pytest

from pitcrew.desktop import autostart


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "autostart" / "pitcrew.desktop"


def read_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(path.read_text(encoding="utf-8"))
    return dict(parser["Desktop Entry"])


def exec_argv(value: str) -> list[str]:
    """Undo the Exec key's escaping as the Desktop Entry spec says a launcher must: the string
    escape first (`\\\\` -> `\\`), then the quoting rule (inside double quotes a backslash
    escapes `"`, `` ` ``, `$` and `\\`), then the field code `%%` -> `%`."""
    value = value.replace("\\\\", "\\")
    args: list[str] = []
    word: list[str] | None = None
    quoted = False
    i = 0
    while i < len(value):
        c = value[i]
        if quoted:
            if c == "\\" and value[i + 1] in '"`$\\':
                i += 1
                word.append(value[i])  # type: ignore[union-attr]
            elif c == '"':
                quoted = False
            else:
                word.append(c)  # type: ignore[union-attr]
        elif c == " ":
            if word is not None:
                args.append("".join(word))
            word = None
        else:
            word = word if word is not None else []
            if c == '"':
                quoted = True
            else:
                assert c not in autostart._RESERVED, f"unquoted reserved {c!r} in {value!r}"
                word.append(c)
        i += 1
    assert not quoted, f"unterminated quote in {value!r}"
    if word is not None:
        args.append("".join(word))
    return [a.replace("%%", "%") for a in args]


def test_enable_writes_a_desktop_entry_that_runs_the_command(xdg: Path, tmp_path: Path) -> None:
    exe = str(tmp_path / "My Apps" / "pitcrew")
    command = [exe, "tray", "--label=100% \"sure\" $HOME `x` back\\slash"]
    assert not autostart.is_enabled()

    assert autostart.enable(command) == xdg
    entry = read_entry(xdg)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Pitcrew"
    assert entry["Icon"] == "pitcrew"
    assert entry["Comment"]
    assert entry["X-GNOME-Autostart-enabled"] == "true"
    assert entry["Exec"].startswith(f'"{exe}" tray "')   # the space forces quotes
    assert exec_argv(entry["Exec"]) == command
    assert autostart.is_enabled()


def test_disable_removes_the_entry_and_is_quiet_when_there_is_none(xdg: Path) -> None:
    autostart.enable(["pitcrew"])
    assert read_entry(xdg)["Exec"] == "pitcrew"
    autostart.disable()
    assert not xdg.exists() and not autostart.is_enabled()
    autostart.disable()


def test_an_entry_switched_off_in_the_desktop_settings_is_not_enabled(xdg: Path) -> None:
    autostart.enable(["pitcrew"])
    xdg.write_text(xdg.read_text().replace("Autostart-enabled=true", "Autostart-enabled=false"))
    assert not autostart.is_enabled()


def test_xdg_config_home_defaults_to_dot_config(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert autostart.enable(["pitcrew"]) == tmp_path / ".config/autostart/pitcrew.desktop"


def test_macos_writes_a_launch_agent_that_runs_at_load(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setenv("HOME", str(tmp_path))
    command = ["/Applications/Pitcrew.app/Contents/MacOS/Pitcrew", "tray"]
    assert not autostart.is_enabled()

    path = autostart.enable(command)
    assert path == tmp_path / "Library/LaunchAgents/dev.pitcrew.app.plist"
    with path.open("rb") as fh:
        plist = plistlib.load(fh)
    assert plist["Label"] == "dev.pitcrew.app"
    assert plist["ProgramArguments"] == command
    assert plist["RunAtLoad"] is True
    assert autostart.is_enabled()

    autostart.disable()
    assert not path.exists() and not autostart.is_enabled()
