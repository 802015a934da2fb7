"""What the command line and the watcher's log say: only what is known, and each thing once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pitcrew.supervisor.core.records import Badge, Decision
from pitcrew.supervisor.store.ledger import Ledger
from tests.cli.test_cli import pitcrew
from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer


def test_the_ledger_says_the_attempt_once(pitcrew_home: Path) -> None:
    ledger = Ledger(pitcrew_home / "autopilot-ledger.jsonl")
    ledger.append(Decision(Badge.RESUMED, 1_800_000_000.0, "work:%3", "Claude Code", "task",
                           "/home/me/api", "process exited", "resumed the session (by session "
                           "id) in the same pane; attempt 1", 1))
    ledger.append(Decision(Badge.STOPPED, 1_800_000_001.0, "work:%3", "Claude Code", "task",
                           "/home/me/api", "process exited", "gave up", 2))
    text = pitcrew("ledger").stdout
    assert text.count("attempt 1") == 1, text
    assert "in the same pane; attempt 1\n" in text
    assert '"task" — gave up (attempt 2)' in text


def test_send_refuses_a_message_longer_than_it_can_type(pitcrew_home: Path) -> None:
    out = pitcrew("send", "--wait", "%7", "x" * 21_000)
    assert out.returncode == 2
    assert out.stderr == ("pitcrew: the message is 21,000 characters long; at most 4,000 can "
                          "be sent (nothing queued)\n")
    assert not (pitcrew_home / "commands.jsonl").exists()
    ok = pitcrew("send", "--wait", "%7", "y" * 3_998, "z")   # 4,000 with the space
    assert ok.returncode == 0, ok.stderr
    [queued] = (pitcrew_home / "commands.jsonl").read_text().splitlines()
    assert len(json.loads(queued)["send"]["text"]) == 4_000


@pytest.mark.e2e
def test_an_agent_typed_at_a_shell_exits_and_the_log_says_what_is_known(
        tmux: TmuxServer, pitcrew_home: Path, fake_provider_installed: Path) -> None:
    (pitcrew_home / "config.toml").write_text("[watch]\npoll_interval = 0.5\n")
    pane = tmux.start("bash --norc --noprofile -i", keep_dead=False)
    tmux.type(pane, "fakeagent")
    tmux.wait_for_text(pane, "fake>")
    watch = Running(["watch", "--tmux-socket", tmux.name])
    try:
        watch.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash 3 0")         # its shell, not tmux, saw the status
        watch.wait_for("Fake Agent exited")
    finally:
        watch.stop()
    [line] = [line for line in watch.lines if "Fake Agent exited" in line]
    assert line.endswith("Fake Agent exited; its exit status is not known"), line
