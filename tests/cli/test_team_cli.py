"""`pitcrew diagnosis`, `consent`, `seat` and `launch` as a user runs them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from tests.cli.test_autopilot_cli import pitcrew
from tests.support.proc import Running
from tests.support.tmux_server import FAKE_AGENT_DIR, TmuxServer
from tests.support.waiting import wait_until


def test_diagnosis_settings_are_saved_and_shown(pitcrew_home: Path) -> None:
    out = pitcrew("diagnosis", "status", env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.splitlines() == [
        "Diagnose & restore stuck agents: on",
        "How to restore: With AI (recommended)",
        "Checkers: none chosen, so the first installed of claude, codex, gemini, opencode, "
        "qwen, kimi, grok, hermes (none installed)",
        "Screen-read consent: not given (only the local classifier reads screens)",
    ]
    assert out.stderr == ""                       # no platformdirs warning, no traceback
    pitcrew("diagnosis", "timer")
    pitcrew("diagnosis", "off")
    out = pitcrew("diagnosis", "checkers", "codex", "gemini:gemini-2.5-pro",
                  env={"PATH": "/usr/bin:/bin"})
    assert "Checkers, in order: codex (not installed), gemini:gemini-2.5-pro (not installed)" \
        in out.stdout
    config = tomllib.loads((pitcrew_home / "config.toml").read_text())
    assert config["diagnosis"] == {"enabled": False, "mode": "timer",
                                   "checkers": ["codex", "gemini:gemini-2.5-pro"],
                                   "checker_timeout": 60, "chain_timeout": 150}
    assert "# How to restore" in (pitcrew_home / "config.toml").read_text()   # comments kept


def test_the_checker_list_is_refused_when_it_breaks_the_rules(pitcrew_home: Path) -> None:
    five = pitcrew("diagnosis", "checkers", "claude", "codex", "gemini", "qwen", "kimi")
    assert five.returncode != 0 and "at most 4 checkers, got 5" in five.stderr
    wrong = pitcrew("diagnosis", "checkers", "aider")
    assert wrong.returncode != 0 and "'aider' cannot be a checker" in wrong.stderr
    assert "Traceback" not in five.stderr + wrong.stderr
    config = tomllib.loads((pitcrew_home / "config.toml").read_text()) \
        if (pitcrew_home / "config.toml").exists() else {}
    assert config.get("diagnosis", {}).get("checkers", []) == []     # nothing was written


def test_consent_is_granted_and_revoked(pitcrew_home: Path) -> None:
    assert "not given" in pitcrew("consent", "status").stdout
    assert pitcrew("consent", "grant").stdout.startswith("Screen-read consent: granted.")
    assert json.loads((pitcrew_home / "state.json").read_text())["consent"] is True
    assert "not given" in pitcrew("consent", "revoke").stdout
    assert json.loads((pitcrew_home / "state.json").read_text())["consent"] is False


def _seat_config(home: Path, cwd: Path) -> None:
    (home / "config.toml").write_text(
        f'[[seats]]\nname = "api"\ncwd = "{cwd}"\nprimary = "fakeagent"\n'
        f'backups = ["fakebackup", "codex:gpt-5"]\n')
    (home / "providers" / "fakebackup.toml").write_text(
        (FAKE_AGENT_DIR / "fakebackup.toml").read_text())


def test_seats_are_listed_and_unknown_ones_refused(
    pitcrew_home: Path, fake_provider_installed: Path, tmp_path: Path
) -> None:
    assert "No seats yet" in pitcrew("seat", "list").stdout
    _seat_config(pitcrew_home, tmp_path)
    assert pitcrew("seat", "list").stdout.strip() == (
        f"api: fakeagent in {tmp_path} (backups: fakebackup, codex:gpt-5; terminals: -)")
    [seat] = json.loads(pitcrew("seat", "list", "--json").stdout)
    assert seat["holder"] == "fakeagent" and seat["backups"] == ["fakebackup", "codex:gpt-5"]
    bad = pitcrew("seat", "bind", "web", "%1")
    assert bad.returncode != 0 and "no seat named 'web' in config.toml" in bad.stderr
    assert pitcrew("launch", "web").returncode != 0


def test_launch_opens_the_seats_agent_in_a_new_window_in_its_folder(
    tmux: TmuxServer, pitcrew_home: Path, fake_provider_installed: Path, tmp_path: Path
) -> None:
    project = tmp_path / "api"
    project.mkdir()
    _seat_config(pitcrew_home, project)
    tmux.start("exec sleep 300")
    session = tmux.pane(tmux.tmux.list_panes()[0].pane_id).session_name
    out = pitcrew("launch", "api", "--session", session,
                  env={"PITCREW_TMUX_SOCKET": tmux.name})
    assert out.returncode == 0, out.stderr
    pane = wait_until(lambda: next((p for p in tmux.tmux.list_panes()
                                    if p.current_path == str(project)), None))
    tmux.wait_for_text(pane.pane_id, "fake>")
    assert pane.session_name == session
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name})
    try:
        w.wait_for(f"{pane.pane_id}: sits in seat api")     # the binding waited for a watcher
    finally:
        w.stop()
    [seat] = json.loads(pitcrew("seat", "list", "--json").stdout)
    assert [t.split(":")[-1] for t in seat["terminals"]] == [pane.pane_id]
