"""`pitcrew autopilot`, `ledger`, `hook` and `hooks` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pitcrew.supervisor.core.records import Badge, Decision
from pitcrew.supervisor.store.ledger import Ledger
from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer


def pitcrew(*args: str, stdin: str = "", env: dict[str, str] | None = None):
    full = {**os.environ, **(env or {})}
    full.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args], input=stdin,
                          capture_output=True, text=True, env=full, timeout=60)


def test_autopilot_on_off_pause_resume_without_a_running_watcher(pitcrew_home: Path) -> None:
    out = pitcrew("autopilot", "status")
    assert out.stdout.strip() == "Autopilot: Off."
    out = pitcrew("autopilot", "on")
    assert out.stdout.startswith("Autopilot: On. Watching. Acts only when a running task goes "
                                 "quiet, its process exits, or a message to it stalls.")
    config = tomllib.loads((pitcrew_home / "config.toml").read_text())
    assert config["autopilot"]["enabled"] is True
    state = json.loads((pitcrew_home / "state.json").read_text())
    assert state["consent"] is True          # turning it on grants the screen-read consent
    assert pitcrew("autopilot", "pause").stdout.strip() == "Autopilot: Paused"
    assert json.loads((pitcrew_home / "state.json").read_text())["paused"] is True
    assert pitcrew("autopilot", "off").stdout.strip() == "Autopilot: Off."
    assert json.loads((pitcrew_home / "state.json").read_text())["paused"] is False


@pytest.mark.parametrize("command", [("autopilot", "on"), ("autopilot", "off"),
                                     ("diagnosis", "off"), ("diagnosis", "timer"),
                                     ("diagnosis", "checkers", "codex")])
def test_commands_that_edit_config_refuse_a_broken_file(pitcrew_home: Path,
                                                        command: tuple[str, ...]) -> None:
    broken = "[autopilot]\nenabled = fals\n"
    (pitcrew_home / "config.toml").write_text(broken)
    out = pitcrew(*command)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.startswith("pitcrew: config.toml: not valid TOML (")
    assert out.stderr.rstrip().endswith("fix it first, nothing changed")
    assert len(out.stderr.splitlines()) == 1
    assert (pitcrew_home / "config.toml").read_text() == broken
    assert not (pitcrew_home / "state.json").exists()      # no consent granted either


def test_off_for_this_launch_changes_no_setting(pitcrew_home: Path) -> None:
    pitcrew("autopilot", "on")
    before = (pitcrew_home / "config.toml").read_text()
    out = pitcrew("autopilot", "status", env={"PITCREW_AUTOPILOT": "off"})
    assert out.stdout.strip() == "Autopilot: Off for this launch."
    assert (pitcrew_home / "config.toml").read_text() == before


def test_a_running_watcher_picks_up_changes(tmux: TmuxServer, pitcrew_home: Path) -> None:
    tmux.start("exec sleep 300")
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name})
    try:
        w.wait_for("Autopilot: Off.")
        pitcrew("autopilot", "on")
        w.wait_for("Autopilot: Watching.")
        pitcrew("autopilot", "pause")
        w.wait_for("Autopilot: Paused")
        pitcrew("autopilot", "resume")
        assert sum("Autopilot: Watching." in line for line in w.lines) >= 1
        w.wait_for("Autopilot: Watching.")
    finally:
        w.stop()
    state = json.loads((pitcrew_home / "state.json").read_text())
    assert state["paused"] is False and state["consent"] is True


def test_the_watcher_says_off_for_this_launch(tmux: TmuxServer, pitcrew_home: Path) -> None:
    pitcrew("autopilot", "on")
    tmux.start("exec sleep 300")
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name, "PITCREW_AUTOPILOT": "off"})
    try:
        w.wait_for("Autopilot: Off for this launch.")
    finally:
        w.stop()


def test_ledger_prints_the_newest_decisions(pitcrew_home: Path) -> None:
    assert pitcrew("ledger").stdout.strip() == "No Autopilot decisions yet."
    ledger = Ledger(pitcrew_home / "autopilot-ledger.jsonl")
    for n, badge in enumerate([Badge.RESUMED, Badge.CONTINUED, Badge.STOPPED] * 3):
        ledger.append(Decision(badge, 1_800_000_000.0 + n, "work:%3", "Claude Code",
                               f"task {n}", "/home/me/api", "process exited", "why", 1))
    rows = json.loads(pitcrew("ledger", "--json").stdout)
    assert [r["prompt"] for r in rows] == [f"task {n}" for n in (8, 7, 6, 5, 4)]
    assert rows[0]["badge"] == "Stopped retrying"
    assert len(json.loads(pitcrew("ledger", "--tail", "2", "--json").stdout)) == 2
    text = pitcrew("ledger").stdout
    assert "Stopped retrying" in text and '"task 8" — why (attempt 1)' in text


def test_hook_records_what_claude_reports(pitcrew_home: Path) -> None:
    payload = {"session_id": "0b7c7b1e", "prompt": "fix the parser", "cwd": "/w",
               "hook_event_name": "UserPromptSubmit"}
    out = pitcrew("hook", "UserPromptSubmit", stdin=json.dumps(payload),
                  env={"TMUX_PANE": "%7", "TMUX": "/tmp/tmux-0/work,123,0"})
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""
    [record] = [json.loads(line) for line in
                (pitcrew_home / "hook-events.jsonl").read_text().splitlines()]
    assert (record["event"], record["pane"], record["server"]) == ("UserPromptSubmit", "%7",
                                                                    "work")
    assert record["session_id"] == "0b7c7b1e" and record["prompt"] == "fix the parser"
    garbage = pitcrew("hook", "Stop", stdin="{not json")
    assert garbage.returncode == 0      # a hook never fails the agent


def test_hooks_install_merges_backs_up_is_idempotent_and_uninstalls(tmp_path: Path) -> None:
    claude = tmp_path / "claude-config"
    claude.mkdir()
    settings = claude / "settings.json"
    mine = {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command",
                                                            "command": "say done"}]}]}}
    settings.write_text(json.dumps(mine))
    env = {"CLAUDE_CONFIG_DIR": str(claude)}
    out = pitcrew("hooks", "install", "claude", env=env)
    assert out.stdout.startswith("Installed Pitcrew's hooks (UserPromptSubmit, Stop, "
                                 "Notification, SessionStart, SessionEnd) in ")
    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    stop_commands = [h["command"] for g in data["hooks"]["Stop"] for h in g["hooks"]]
    assert stop_commands[0] == "say done" and stop_commands[1].endswith(" hook Stop")
    assert len(list(claude.glob("settings.json.pitcrew-backup-*"))) == 1
    again = pitcrew("hooks", "install", "claude", env=env)
    assert again.stdout.startswith("Pitcrew's hooks are already installed")
    assert json.loads(settings.read_text()) == data
    out = pitcrew("hooks", "uninstall", "claude", env=env)
    assert out.stdout.startswith("Removed 5 Pitcrew hook(s)")
    assert json.loads(settings.read_text()) == mine


def test_hooks_install_refuses_to_touch_a_broken_settings_file(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{broken")
    out = pitcrew("hooks", "install", "claude", env={"CLAUDE_CONFIG_DIR": str(tmp_path)})
    assert out.returncode == 2 and "not valid JSON" in out.stderr
    assert settings.read_text() == "{broken"


def test_autopilot_status_lists_what_is_pending_per_terminal(pitcrew_home: Path) -> None:
    import time

    (pitcrew_home / "config.toml").write_text("[autopilot]\nenabled = true\n")
    reset = time.time() + 3600
    (pitcrew_home / "state.json").write_text(json.dumps({
        "version": 1, "paused": False, "consent": True, "terminals": {
            "default:%3": {"terminal": "work:%3", "agent": "Claude Code", "project": "/p",
                           "task": "fix the parser", "incident": {
                               "number": 1, "prompt": "fix the parser", "opened_at": 1.0,
                               "trigger": "task went quiet", "reason": "usage limit",
                               "phase": "waiting", "hold": "rate_limit", "next_at": reset}},
            "default:%5": {"terminal": "work:%5", "agent": "Codex", "project": "/q",
                           "incident": {"number": 2, "prompt": "add tests", "opened_at": 1.0,
                                        "trigger": "process exited", "reason": "exit 1",
                                        "phase": "hold", "hold": "login"}}}}))
    out = pitcrew("autopilot", "status").stdout.splitlines()
    assert out[0].startswith("Autopilot: On. Watching.")
    assert out[1].startswith("  work:%3 (Claude Code): Usage limit: Autopilot resumes in 60 min")
    assert '"fix the parser"' in out[1]
    assert out[2] == '  work:%5 (Codex): Waiting on you: log in — "add tests"'
    data = json.loads(pitcrew("autopilot", "status", "--json").stdout)
    assert data["mode"] == "on"
    assert [(p["target"], p["hold"]) for p in data["pending"]] == [
        ("work:%3", "rate_limit"), ("work:%5", "login")]
    assert data["pending"][0]["next_at"] == reset
