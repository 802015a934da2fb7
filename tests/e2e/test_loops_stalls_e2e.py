"""Loops and stalls as a user sees them (issue 21 items 5, 6, 11): `pitcrew watch` at a tenth
of real time, a real tmux server, and a CLI Pitcrew's authors did not write — the steady agent
(tests/e2e/steady_cli/steadyagent), declared only by a provider file written from the README
and started from an interactive shell. What is asserted: the ledger rows, what the agent's
own session file and screen show, and which process runs.

* polling a background job (the same successful call again and again) is work: no loop, no
  hold — and a crash after it is resumed;
* a spinner alternating two frames at 1 Hz is no step: no loop;
* Manual timer: a long step with a live spinner and timer is left alone past the idle
  timeout; a frozen spinner is resumed; a stalled stream (spinners alone moving past
  `stalled`) is resumed, not dismissed as "working again by itself";
* "API Error: 500 · retrying" again and again, with no tool calls, is noticed as a loop and
  handled as a server error (a 30 s wait).
"""

from __future__ import annotations

import json
import shlex
import shutil
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.test_autopilot_e2e import badges, rows, wait_badges, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
STEADY_DIR = Path(__file__).resolve().parent / "steady_cli"


@pytest.fixture
def home(pitcrew_home: Path) -> Path:
    providers = pitcrew_home / "providers"
    providers.mkdir(exist_ok=True)
    shutil.copy(STEADY_DIR / "steadyagent.toml", providers / "steadyagent.toml")
    return pitcrew_home


def configure(home: Path, mode: str = "ai", timeouts: str = "") -> None:
    (home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\n"
        f'[diagnosis]\nmode = "{mode}"\n[timeouts]\nsoft = false\nhard = false\n{timeouts}\n')


def steady_home(tmux: TmuxServer) -> Path:
    return tmux.root / "steady-home"


def shell_agent(tmux: TmuxServer, cwd: Path) -> tuple[str, int]:
    """The agent started by hand from an interactive bash; its PATH and home set only there."""
    pane = tmux.start("bash --norc --noprofile -i", cwd=cwd, keep_dead=False)
    tmux.type(pane, f"export PATH={shlex.quote(str(STEADY_DIR))}:$PATH "
                    f"STEADY_HOME={shlex.quote(str(steady_home(tmux)))}")
    tmux.type(pane, "steadyagent")
    tmux.wait_for_text(pane, "◇")
    return pane, agent_pid(tmux, pane)


def agent_pid(tmux: TmuxServer, pane: str) -> int:
    def find() -> int | None:
        root = psutil.Process(tmux.pane(pane).pid)
        return next((p.pid for p in root.children(recursive=True)
                     if any(part.endswith("steadyagent") for part in p.cmdline())), None)
    return wait_until(find, 10, message=lambda: "a steadyagent process in:\n"
                      + tmux.screen(pane))


def ledger(home: Path) -> list[tuple[str, str, str]]:
    return [(r.badge.value, r.trigger, r.reason) for r in rows(home)]


def records(tmux: TmuxServer) -> list[dict]:
    out = []
    for path in steady_home(tmux).rglob("*.jsonl"):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


def test_polling_a_background_job_is_work_and_a_crash_after_it_is_resumed(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    configure(home)
    pane, _ = shell_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "poll 14")                      # 14 identical successful polls
        tmux.wait_for_text(pane, "done: poll 14", timeout=30)
        time.sleep(3)                                   # a few more looks at its transcript
        assert badges(home) == [], "polling that succeeds is no loop"
        tmux.type(pane, "pollcrash 10")
        resumed = wait_badges(home, "Resumed", timeout=40)[0]
        tmux.wait_for_text(pane, "Resumed session", timeout=20)
    finally:
        w.stop()
    polls = [r for r in records(tmux) if r.get("type") == "call"]
    assert len(polls) == 24
    assert "Looping" not in badges(home) and "Diagnosed" not in badges(home)
    assert resumed.prompt == "pollcrash 10"


def test_a_failing_loop_is_held_but_a_crash_after_the_hold_is_resumed(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    configure(home)
    pane, _ = shell_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "failcrash 14")                 # the same failing call, then a crash
        wait_until(lambda: "Looping" in badges(home), 40,
                   message=lambda: f"a Looping row in {badges(home)}")
        wait_until(lambda: "Resumed" in badges(home), 60,
                   message=lambda: f"a Resumed row in {ledger(home)}")
        tmux.wait_for_text(pane, "Resumed session", timeout=20)
    finally:
        w.stop()
    crash_rows = [r for r in rows(home) if r.trigger == "process exited"]
    assert crash_rows, [(r.badge.value, r.trigger, r.reason) for r in rows(home)]


def test_a_spinner_alternating_two_frames_is_no_loop(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    configure(home, timeouts="idle = false")
    toml = home / "providers" / "steadyagent.toml"      # declared without its transcript:
    text = toml.read_text()                             # the screen is all Pitcrew has
    toml.write_text(text[: text.index("# its tool calls")])
    pane, pid = shell_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "build 14")                     # ◐/◓ at 1 Hz for 14 s
        tmux.wait_for_text(pane, "done: build 14", timeout=30)
        time.sleep(2)
    finally:
        w.stop()
    assert badges(home) == []
    assert not w.saw("looping")
    assert agent_pid(tmux, pane) == pid


def test_timer_mode_leaves_a_long_step_with_a_live_spinner_alone(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    """idle 30 s (3 s scaled): a 12 s build whose spinner and timer move is not stuck."""
    configure(home, mode="timer", timeouts="idle = 30")
    pane, pid = shell_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "build 12")
        tmux.wait_for_text(pane, "done: build 12", timeout=30)
        time.sleep(2)
    finally:
        w.stop()
    assert badges(home) == []
    assert agent_pid(tmux, pane) == pid, "the agent was not killed"


def test_timer_mode_resumes_a_frozen_spinner(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    configure(home, mode="timer", timeouts="idle = 30")
    pane, pid = shell_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "freeze")
        wait_until(lambda: "Resumed" in badges(home), 40,
                   message=lambda: f"a Resumed row in {badges(home)}")
        tmux.wait_for_text(pane, "Resumed session", timeout=20)
    finally:
        w.stop()
    assert agent_pid(tmux, pane) != pid


def test_timer_mode_resumes_a_stalled_stream_instead_of_dismissing_it(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    """Spinner and timer move, nothing else, past `stalled` (30 s, 15 s at half time): stuck —
    not "working again by itself" (the spinner printed during the 2.5 s wait before acting)."""
    configure(home, mode="timer", timeouts="idle = 20\nstalled = 30")
    pane, pid = shell_agent(tmux, tmp_path)
    w = watch(tmux, scale="0.5")
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "build 600")
        wait_until(lambda: "Resumed" in badges(home), 60,
                   message=lambda: f"a Resumed row in {badges(home)}")
        tmux.wait_for_text(pane, "Resumed session", timeout=20)
    finally:
        w.stop()
    assert not [r for r in rows(home) if "working again by itself" in r.reason]
    assert agent_pid(tmux, pane) != pid


def test_a_repeating_server_error_is_noticed_and_waits_as_a_server_error(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    configure(home, timeouts="idle = false")
    pane, _ = shell_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "error500 30")                  # once a second, no tool calls
        wait_until(lambda: "Looping" in badges(home), 40,
                   message=lambda: f"a Looping row in {badges(home)}")
        scheduled = wait_until(
            lambda: [r for r in rows(home) if r.badge.value == "Scheduled"], 20,
            message=lambda: f"a Scheduled row in {badges(home)}")[0]
    finally:
        w.stop()
    looping = next(r for r in rows(home) if r.badge.value == "Looping")
    assert "API Error: 500" in looping.reason
    assert scheduled.reason.startswith("server error: waiting 3s")
    assert [r for r in records(tmux) if r.get("type") == "call"] == []
