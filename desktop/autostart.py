"""Start Pitcrew at login, per platform (no Qt here: the tray's menu and the CLI both use it).

* Linux and other XDG desktops: `$XDG_CONFIG_HOME/autostart/pitcrew.desktop`
  (XDG_CONFIG_HOME defaults to ~/.config), with Exec quoted per the Desktop Entry spec.
* macOS: a launchd agent, `~/Library/LaunchAgents/dev.pitcrew.app.plist`, RunAtLoad.
* Windows: the value "Pitcrew" under HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run.

`enable(command)` writes the entry for `command` (an argv) and returns where it lives (the
registry key as a Path-like label on Windows); `disable()` removes it (no error when absent);
`is_enabled()` says whether an entry that would start Pitcrew is there.
"""

from __future__ import annotations

import os
import plistlib
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path, PureWindowsPath

DESKTOP_FILE = "pitcrew.desktop"
LAUNCH_AGENT_LABEL = "dev.pitcrew.app"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = "Pitcrew"

# Characters that make an Exec argument need quoting (Desktop Entry spec, "The Exec key").
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def _platform() -> str:
    if sys.platform == "darwin":
        return "macos"
    if sys.platform == "win32":
        return "windows"
    return "xdg"


# -- XDG -----------------------------------------------------------------------------------

def xdg_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "autostart" / DESKTOP_FILE


def exec_quote(arg: str) -> str:
    """One Exec argument: quoted when it holds a reserved character; inside quotes `"`, `` ` ``,
    `$` and `\\` are backslash-escaped; `%` is doubled (field codes). The value is then
    escaped again as a desktop-file string (backslash doubled)."""
    arg = arg.replace("%", "%%")
    if arg and not (_RESERVED & set(arg)):
        return arg
    inner = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{inner}"'


def exec_line(command: Sequence[str]) -> str:
    """The value of the Exec key, escaped for the desktop file (`\\` -> `\\\\`)."""
    return " ".join(exec_quote(a) for a in command).replace("\\", "\\\\")


def desktop_entry(command: Sequence[str]) -> str:
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Name=Pitcrew",
        "Comment=Keeps your AI coding agents working and tells you when one needs you",
        f"Exec={exec_line(command)}",
        "Icon=pitcrew",
        "Terminal=false",
        "StartupNotify=false",
        "X-GNOME-Autostart-enabled=true",
        "",
    ])


# -- macOS ---------------------------------------------------------------------------------

def launch_agent_path() -> Path:
    return Path(os.environ.get("HOME") or Path.home()) / "Library" / "LaunchAgents" / (
        f"{LAUNCH_AGENT_LABEL}.plist")


def launch_agent(command: Sequence[str]) -> dict[str, object]:
    return {
        "Label": LAUNCH_AGENT_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        "ProcessType": "Interactive",
    }


# -- Windows (untested here) -----------------------------------------------------------------

def _windows_command(command: Sequence[str]) -> str:
    return subprocess.list2cmdline(list(command))


def _windows_get() -> str | None:
    if sys.platform != "win32":  # also tells mypy that winreg is Windows-only
        raise OSError("the Windows registry exists only on Windows")
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            value, _ = winreg.QueryValueEx(key, RUN_VALUE)
    except OSError:
        return None
    return str(value)


def _windows_set(command: Sequence[str]) -> None:
    if sys.platform != "win32":  # also tells mypy that winreg is Windows-only
        raise OSError("the Windows registry exists only on Windows")
    import winreg

    with winreg.CreateKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
        winreg.SetValueEx(key, RUN_VALUE, 0, winreg.REG_SZ, _windows_command(command))


def _windows_delete() -> None:
    if sys.platform != "win32":  # also tells mypy that winreg is Windows-only
        raise OSError("the Windows registry exists only on Windows")
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
            winreg.DeleteValue(key, RUN_VALUE)
    except FileNotFoundError:
        pass


# -- the three calls -------------------------------------------------------------------------

def is_enabled() -> bool:
    kind = _platform()
    if kind == "windows":
        return _windows_get() is not None
    if kind == "macos":
        return launch_agent_path().is_file()
    path = xdg_path()
    if not path.is_file():
        return False
    # A user who unticks "start at login" in GNOME's settings keeps the file with this off.
    text = path.read_text(encoding="utf-8", errors="replace")
    return "X-GNOME-Autostart-enabled=false" not in text and "Hidden=true" not in text


def enable(command: Sequence[str]) -> Path:
    """Start `command` at login from now on; returns the file (or registry key) written."""
    if not command:
        raise ValueError("enable() needs the command to start")
    kind = _platform()
    if kind == "windows":
        _windows_set(command)
        return Path(PureWindowsPath("HKEY_CURRENT_USER", RUN_KEY, RUN_VALUE))
    path = launch_agent_path() if kind == "macos" else xdg_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    if kind == "macos":
        tmp.write_bytes(plistlib.dumps(launch_agent(command)))
    else:
        tmp.write_text(desktop_entry(command), encoding="utf-8")
    tmp.replace(path)
    return path


def disable() -> None:
    kind = _platform()
    if kind == "windows":
        _windows_delete()
        return
    path = launch_agent_path() if kind == "macos" else xdg_path()
    path.unlink(missing_ok=True)
