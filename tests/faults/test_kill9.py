"""`kill -9` of the real `pitcrew watch` at every step of an incident.

One table: where the watcher dies (it SIGKILLs itself right after the n-th time that step
happened — see inject/sitecustomize.py — so each row hits its step exactly), and the incident
it dies in. After a restart, for every row: the incident is finished exactly once — one
resume per restart the ladder allows, with the right attempt numbers — nothing the agent
received was typed twice, and no incident is lost.

Then what happens while no watcher runs at all (killed, or stopped cleanly): a crash of a
running task meanwhile is acted on at the next start, once; and an open incident keeps its
attempt count across the restart.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from tests.faults.harness import (
    agent_records,
    badges,
    killed,
    prompts,
    rows,
    start_agent,
    wait_badges,
    watch,
)
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Point:
    step: str            # the step the watcher dies right after (inject/sitecustomize.py)
    nth: int             # … the n-th time it happens
    incident: str        # crash | crashloop | shell | send | checker


CRASH = ("Resumed", "Continued")
LOOP = ("Resumed", "Continued") * 3 + ("Stopped retrying",)
POINTS = {
    "after the exit is seen": Point("exit_seen", 1, "crash"),
    "as the 5 s wait ends": Point("wait_over", 1, "crash"),
    "as the 20 s wait ends": Point("wait_over", 2, "crashloop"),
    "as the 60 s wait ends": Point("wait_over", 3, "crashloop"),
    "after the 3rd exit, before the last wait": Point("exit_seen", 3, "crashloop"),
    "respawned, not confirmed": Point("resume_started", 1, "crash"),
    "resume typed at the shell, before its Enter": Point("resume_typed", 1, "shell"),
    "continue typed, before its Enter": Point("continue_typed", 1, "crash"),
    "a queued message typed, before its Enter": Point("message_typed", 1, "send"),
    "while a checker runs": Point("checker_running", 1, "checker"),
}


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def pitcrew(*args: str, tmux: TmuxServer) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args], text=True,
                          capture_output=True, timeout=60,
                          env={**os.environ, "PITCREW_TMUX_SOCKET": tmux.name})


def begin(point: Point, tmux: TmuxServer, home: Path, cwd: Path) -> tuple[str, dict]:
    """Start the agent, and return (pane, extra environment for both watchers)."""
    env: dict[str, str] = {}
    if point.incident == "shell":
        pane = tmux.start("bash --norc --noprofile -i", cwd=cwd, keep_dead=False)
        tmux.type(pane, "fakeagent")
        tmux.wait_for_text(pane, "fake>")
    else:
        pane = start_agent(tmux, cwd)
    if point.incident == "checker":
        from tests.test_checkers import Fakes

        (cwd / "checkers").mkdir()
        fakes = Fakes(cwd / "checkers")
        fakes.install("claude", "json", answer={"state": "crashed", "reason": "it hangs",
                                                "reset_at": None})
        (home / "config.toml").write_text(
            "[autopilot]\nenabled = true\nquiet_after = 10\n[diagnosis]\nmode = \"ai\"\n"
            'checkers = ["claude"]\n')
        assert pitcrew("consent", "grant", tmux=tmux).returncode == 0
        env["PATH"] = f"{fakes.bin}:{__import__('os').environ['PATH']}"
        env["FAULTS_FAKES"] = str(fakes.bin)
    return pane, env


def trigger(point: Point, tmux: TmuxServer, pane: str) -> None:
    if point.incident == "send":
        out = pitcrew("send", pane, "work 1", tmux=tmux)
        assert out.returncode == 0, out.stdout + out.stderr
    else:
        tmux.type(pane, {"crash": "crash 3 1", "shell": "crash 3 1", "crashloop": "crashloop 9",
                         "checker": "hang"}[point.incident])


def finish(point: Point, tmux: TmuxServer, home: Path, pane: str) -> None:
    """Wait for the incident to be done, then a moment more: nothing else may happen."""
    if point.incident == "send":
        wait_until(lambda: "work 1" in prompts(tmux), 30, message=lambda: str(prompts(tmux)))
        tmux.wait_for_text(pane, "● Done: work 1")
    elif point.incident == "crashloop":
        wait_badges(home, *LOOP, timeout=60)
    elif point.incident == "checker":
        wait_badges(home, "Diagnosed", *CRASH, timeout=60)
    else:
        wait_badges(home, *CRASH, timeout=60)
    if point.incident != "send":
        wait_until(lambda: CONTINUE_MESSAGE in prompts(tmux), 20,
                   message=lambda: str(prompts(tmux)))
    time.sleep(1.0)


@pytest.mark.parametrize("point", POINTS.values(), ids=POINTS.keys())
def test_a_kill_9_at_any_step_resumes_once_and_types_nothing_twice(
    tmux: TmuxServer, home: Path, tmp_path: Path, point: Point
) -> None:
    pane, env = begin(point, tmux, home, tmp_path)
    if point.incident == "checker":
        (Path(env["FAULTS_FAKES"]) / "behaviour.json").write_text(
            (Path(env["FAULTS_FAKES"]) / "behaviour.json").read_text().replace(
                '"do": "json"', '"do": "hang"'))
    scale = "0.04" if point.incident == "crashloop" else "0.1"   # a 120 s crash-loop cooldown
    faults: dict[str, object] = {"kill_at": point.step, "kill_nth": point.nth}
    if point.incident == "checker":       # die once the checker really runs, not before
        faults["checker_log"] = str(Path(env["FAULTS_FAKES"]).parent / "runs.jsonl")
    first = watch(tmux, faults, env=env, scale=scale)
    first.wait_for(f"{pane}: idle")
    trigger(point, tmux, pane)
    killed(first, timeout=60)
    if point.incident == "checker":
        (Path(env["FAULTS_FAKES"]) / "behaviour.json").write_text(
            (Path(env["FAULTS_FAKES"]) / "behaviour.json").read_text().replace(
                '"do": "hang"', '"do": "json"'))
    again = watch(tmux, env=env, scale=scale)
    try:
        finish(point, tmux, home, pane)
    finally:
        assert again.stop() == 0
        print("before the kill:", *first.lines, "after the restart:", *again.lines, sep="\n")
    got = badges(home)
    received = prompts(tmux)
    if point.incident == "checker":      # the hung checker the killed watcher left behind
        hung = [r for r in map(json.loads, (Path(env["FAULTS_FAKES"]).parent / "runs.jsonl")
                               .read_text().splitlines()) if r.get("do") == "hang"]
        assert hung and all(not running(r[k]) for r in hung for k in ("pid", "child_pid"))
    if point.incident == "send":
        assert received == ["work 1"], "the message arrived exactly once"
        assert got == ["Typed"]
        return
    if point.incident == "crashloop":
        assert got == list(LOOP), "three resumes, then it stopped and said so"
        resumed = [r for r in wait_badges(home, *LOOP) if r.badge.value == "Resumed"]
        assert [r.attempt for r in resumed] == [1, 2, 3]
        assert received == ["crashloop 9"] + [CONTINUE_MESSAGE] * 3
        assert len(agent_records(tmux, "crash")) == 4
        return
    expected = ["Diagnosed", *CRASH] if point.incident == "checker" else list(CRASH)
    assert got == expected, "one resume, one continue"
    [resumed] = [r for r in wait_badges(home, *expected) if r.badge.value == "Resumed"]
    assert resumed.attempt == 1
    first_prompt = "hang" if point.incident == "checker" else "crash 3 1"
    assert received == [first_prompt, CONTINUE_MESSAGE], "nothing typed twice"


def agent_crashes(tmux: TmuxServer, n: int, timeout: float = 30) -> None:
    wait_until(lambda: len(agent_records(tmux, "crash")) >= n, timeout,
               message=lambda: f"{n} crashes of the agent: {agent_records(tmux, 'crash')}")


def stop_watcher(w, how: str) -> None:
    if how == "kill -9":
        w.proc.kill()
        w.proc.wait(10)
        w.stop()
    else:
        assert w.stop() == 0          # SIGTERM: a clean stop


@pytest.mark.parametrize("how", ["kill -9", "SIGTERM"])
@pytest.mark.parametrize("style", ["pane", "shell"])
def test_a_crash_while_no_watcher_runs_is_resumed_once_at_the_next_start(
        tmux: TmuxServer, home: Path, tmp_path: Path, style: str, how: str) -> None:
    """The prompt was seen running; the watcher went away; the agent crashed meanwhile."""
    pane, env = begin(Point("", 1, "shell" if style == "shell" else "crash"), tmux, home,
                      tmp_path)
    first = watch(tmux, env=env)
    first.wait_for(f"{pane}: idle")
    tmux.type(pane, "crash 3 4")
    first.wait_for(f"{pane}: busy")
    # state.json holds the running task (saved just after the busy line: under load it lags)
    saved = home / "state.json"
    wait_until(lambda: saved.exists() and '"task": "crash 3 4"' in saved.read_text(), 3,
               message=lambda: saved.read_text() if saved.exists() else "no state.json")
    stop_watcher(first, how)
    agent_crashes(tmux, 1)
    time.sleep(0.5)
    again = watch(tmux, env=env)
    try:
        wait_badges(home, *CRASH, timeout=60)
        wait_until(lambda: CONTINUE_MESSAGE in prompts(tmux), 20,
                   message=lambda: str(prompts(tmux)))
        time.sleep(1.5)
    finally:
        assert again.stop() == 0
        print("before:", *first.lines, "after the restart:", *again.lines, sep="\n")
    assert badges(home) == list(CRASH), "one resume, one continue"
    [resumed] = [r for r in wait_badges(home, *CRASH) if r.badge.value == "Resumed"]
    assert resumed.attempt == 1 and resumed.prompt == "crash 3 4"
    assert prompts(tmux) == ["crash 3 4", CONTINUE_MESSAGE], "nothing typed twice"


@pytest.mark.parametrize("how", ["kill -9", "SIGTERM"])
def test_a_restart_during_an_open_incident_keeps_its_count_and_acts_on_a_crash_meanwhile(
        tmux: TmuxServer, home: Path, tmp_path: Path, how: str) -> None:
    """Resumed and continued once; the watcher goes away while the agent works on the
    continue; the agent crashes again meanwhile. The next watcher resumes it as attempt 2
    of the same incident (the continue it finds on screen is its own, not a new prompt)."""
    pane = tmux.start("fakeagent", cwd=tmp_path, env={"FAKEAGENT_CRASH_AFTER": "4"})
    tmux.wait_for_text(pane, "fake>")
    first = watch(tmux)
    first.wait_for(f"{pane}: idle")
    tmux.type(pane, "crashloop 2")
    wait_badges(home, *CRASH, timeout=60)
    wait_until(lambda: CONTINUE_MESSAGE in prompts(tmux), 20, message=lambda: str(prompts(tmux)))
    stop_watcher(first, how)
    agent_crashes(tmux, 2)
    time.sleep(0.5)
    again = watch(tmux)
    try:
        wait_badges(home, *CRASH, *CRASH, timeout=60)
        wait_until(lambda: prompts(tmux).count(CONTINUE_MESSAGE) == 2, 20,
                   message=lambda: str(prompts(tmux)))
        tmux.wait_for_text(pane, "● Done: Continue from where")
        time.sleep(1.5)
    finally:
        assert again.stop() == 0
        print("before:", *first.lines, "after the restart:", *again.lines, sep="\n")
    assert badges(home) == [*CRASH, *CRASH]
    resumed = [r for r in rows(home) if r.badge.value == "Resumed"]
    assert [(r.attempt, r.readings.get("incident")) for r in resumed] == [(1, 1), (2, 1)]
    assert prompts(tmux) == ["crashloop 2", CONTINUE_MESSAGE, CONTINUE_MESSAGE]
