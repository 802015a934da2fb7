"""Every setting Pitcrew writes into config.toml (the command line and the dashboard), written
twice in a row with the user's own comments and edits in between: the second write works, and
the comments survive it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pitcrew.supervisor.core.hosts import Host
from pitcrew.supervisor.service.settings import SETTABLE, Settings
from pitcrew.supervisor.store import config_edit
from pitcrew.supervisor.store.config import load_config
from pitcrew.supervisor.store.hosts_edit import add_host, hosts_in, remove_host
from tests.cli.test_autopilot_cli import pitcrew

NOTE = "# my own note, kept"


def _annotate(path: Path, section: str, key: str) -> None:
    """What a user does between two writes: a comment above the setting and after it."""
    lines = path.read_text().splitlines()
    head = lines.index(f"[{section}]")
    at = next(i for i in range(head + 1, len(lines)) if lines[i].startswith(f"{key} ="))
    lines[at] += "   # trailing, kept"
    lines.insert(at, NOTE)
    path.write_text("\n".join(lines) + "\n")


# (first command, second command, section, key, value after the second)
COMMANDS = [
    (("diagnosis", "checkers", "claude"), ("diagnosis", "checkers", "codex", "gemini"),
     "diagnosis", "checkers", ["codex", "gemini"]),
    (("diagnosis", "checkers", "claude"), ("diagnosis", "checkers", "claude:sonnet"),
     "diagnosis", "checkers", ["claude:sonnet"]),
    (("diagnosis", "off"), ("diagnosis", "on"), "diagnosis", "enabled", True),
    (("diagnosis", "timer"), ("diagnosis", "ai"), "diagnosis", "mode", "ai"),
    (("autopilot", "on"), ("autopilot", "off"), "autopilot", "enabled", False),
]


@pytest.mark.parametrize(("first", "second", "section", "key", "value"), COMMANDS)
def test_each_command_writes_its_setting_twice_keeping_comments(
        pitcrew_home: Path, first: tuple[str, ...], second: tuple[str, ...], section: str,
        key: str, value: object) -> None:
    config = pitcrew_home / "config.toml"
    out = pitcrew(*first)
    assert out.returncode == 0, out.stderr
    _annotate(config, section, key)
    out = pitcrew(*second)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    text = config.read_text()
    assert tomllib.loads(text)[section][key] == value
    assert NOTE in text and f"{key} = " in text and "   # trailing, kept" in text
    again = pitcrew(*first)                     # and a third time, over the second's line
    assert again.returncode == 0, again.stderr
    assert NOTE in config.read_text() and "   # trailing, kept" in config.read_text()


def test_the_checker_list_written_once_is_changed_by_the_next_command(
        pitcrew_home: Path) -> None:
    """The reported case, as a user sees it."""
    assert pitcrew("diagnosis", "checkers", "claude").returncode == 0
    out = pitcrew("diagnosis", "checkers", "codex")
    assert (out.returncode, out.stderr) == (0, "")
    assert "Checkers, in order: codex" in out.stdout


def test_a_multi_line_array_of_the_users_own_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[diagnosis]\nmode = "ai"\ncheckers = [  # my picks\n  "codex",  # fast\n'
                    '  "gemini",\n]  # until June\nchecker_timeout = 60\n\n[[hosts]]\n'
                    'name = "gpu1"\nssh = "me@gpu1"\n')
    config_edit.set_value(path, "diagnosis", "checkers", ["claude"])
    config_edit.set_value(path, "diagnosis", "checkers", ["claude", "qwen"])
    text = path.read_text()
    assert text == ('[diagnosis]\nmode = "ai"\n# my picks\n# fast\ncheckers = ["claude", "qwen"]'
                    '  # until June\nchecker_timeout = 60\n\n[[hosts]]\nname = "gpu1"\n'
                    'ssh = "me@gpu1"\n')
    config_edit.set_value(path, "diagnosis", "enabled", False)     # a key the section lacks
    data = tomllib.loads(path.read_text())
    assert data["diagnosis"]["enabled"] is False and data["hosts"] == [
        {"name": "gpu1", "ssh": "me@gpu1"}]


def test_a_hash_inside_a_string_is_not_a_comment(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[tmux]\nsocket = "a#b"  # mine\n')
    config_edit.set_value(path, "tmux", "socket", "c#d")
    config_edit.set_value(path, "tmux", "socket", "e")
    assert path.read_text() == '[tmux]\nsocket = "e"  # mine\n'


@pytest.mark.parametrize(("section", "key", "first", "second"), [
    ("autopilot", "enabled", True, False), ("autopilot", "ask_to_continue", False, True),
    ("diagnosis", "enabled", False, True), ("diagnosis", "mode", "timer", "ai"),
    ("diagnosis", "checkers", ["claude", "codex"], ["gemini"]),
])
def test_each_dashboard_setting_is_written_twice_keeping_comments(
        tmp_path: Path, section: str, key: str, first: object, second: object) -> None:
    assert (section, key) in SETTABLE
    path = tmp_path / "config.toml"
    path.write_text("# top\n")
    settings = Settings(path, load_config(path).config)
    assert settings.set(section, key, first)
    _annotate(path, section, key)
    assert settings.set(section, key, second)
    assert settings.set(section, key, first)
    text = path.read_text()
    assert tomllib.loads(text)[section][key] == first
    assert text.startswith("# top\n") and NOTE in text and "   # trailing, kept" in text
    assert load_config(path).errors == ()


def test_every_settable_key_is_covered() -> None:
    assert {("autopilot", "enabled"), ("autopilot", "ask_to_continue"),
                        ("diagnosis", "enabled"), ("diagnosis", "mode"),
                        ("diagnosis", "checkers")} == SETTABLE


def test_hosts_added_and_removed_twice_keep_the_users_comments(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# mine\n[autopilot]\nenabled = true  # keep\n")
    add_host(path, Host("gpu1", "me@gpu1"))
    path.write_text(path.read_text() + "# about what follows, kept\n\n[diagnosis]\n"
                    'checkers = [\n  "codex",\n]\n')
    add_host(path, Host("gpu2", "me@gpu2", tmux_socket="work"))
    assert remove_host(path, "gpu1")
    assert remove_host(path, "gpu2")
    add_host(path, Host("gpu1", "me@gpu1"))
    assert [h.name for h in hosts_in(path)] == ["gpu1"]
    text = path.read_text()
    assert text.startswith("# mine\n[autopilot]\nenabled = true  # keep\n")
    assert "# about what follows, kept" in text
    assert tomllib.loads(text)["diagnosis"] == {"checkers": ["codex"]}
    config_edit.set_value(path, "diagnosis", "checkers", ["claude"])
    assert [h.name for h in hosts_in(path)] == ["gpu1"]


@pytest.mark.parametrize("broken", ["[autopilot]\nenabled = fals\n",
                                    "[autopilot]\nenabled = true\n[autopilot]\n",
                                    "autopilot = 5\n"])
def test_autopilot_on_over_a_config_it_cannot_edit_is_refused_with_an_exit_code(
        pitcrew_home: Path, broken: str) -> None:
    (pitcrew_home / "config.toml").write_text(broken)
    out = pitcrew("autopilot", "on")
    assert out.returncode != 0
    assert len(out.stderr.splitlines()) == 1 and out.stderr.startswith("pitcrew: config.toml:")
    assert (pitcrew_home / "config.toml").read_text() == broken
