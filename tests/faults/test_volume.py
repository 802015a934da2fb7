"""Volume: 200 agent panes through about an hour of Autopilot's time (its waits scaled by
PITCREW_TEST_TIME_SCALE=0.01) of busy/idle churn, with crashes that must each be resumed once.
No exit is missed, and the real watcher's open file descriptors and memory stay flat (its own
counters, read from /proc — not timings). The agents are `tests/faults/tiny/tinyagent`, one
small shell each, so this stays cheap enough for CI.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import psutil
import pytest

from tests.faults.harness import badges, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
TINY = Path(__file__).resolve().parent / "tiny"
PANES = int(os.environ.get("FAULTS_PANES", "200"))
ROUNDS = 3                 # of churn; each: some panes crash, some work, some answer at once
CRASHES_PER_ROUND = 20
MB = 1024 * 1024


@pytest.fixture
def tiny_home(pitcrew_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", f"{TINY}{os.pathsep}{os.environ['PATH']}")   # for tmux's panes
    (pitcrew_home / "providers").mkdir(exist_ok=True)
    shutil.copy(TINY / "tinyagent.toml", pitcrew_home / "providers" / "tinyagent.toml")
    (pitcrew_home / "config.toml").write_text(
        "[autopilot]\nenabled = true\n"     # task timeouts off: this is about exits
        "[timeouts]\nidle = false\nsoft = false\nhard = false\nnot_started = false\n")
    return pitcrew_home


def resumed(home: Path, count: int) -> None:
    wait_until(lambda: badges(home).count("Continued") >= count, 120,
               message=lambda: f"{count} resumes in {badges(home)[-12:]} …")


def counters(pid: int) -> tuple[int, int]:
    proc = psutil.Process(pid)
    return proc.num_fds(), proc.memory_info().rss


def test_200_panes_of_churn_miss_no_exit_and_keep_fds_and_memory_flat(
    tmux: TmuxServer, tiny_home: Path, tmp_path: Path
) -> None:
    panes = [tmux.start("tinyagent", cwd=tmp_path) for _ in range(PANES)]
    w = watch(tmux, scale="0.01")
    try:
        wait_until(lambda: sum(": idle" in line for line in w.lines) >= PANES, 90,
                   message=lambda: f"{sum(': idle' in x for x in w.lines)} panes idle")
        before = counters(w.proc.pid)
        rng = random.Random(13)
        crashed: set[str] = set()
        for _ in range(ROUNDS):
            order = rng.sample(panes, len(panes))
            crashing = [p for p in order if p not in crashed][:CRASHES_PER_ROUND]
            for pane in order:
                if pane in crashing:
                    tmux.type(pane, "crash")
                else:
                    tmux.type(pane, rng.choice(["work", "work", "hello"]))
            crashed.update(crashing)
            resumed(tiny_home, len(crashed))
        wait_until(lambda: all("tiny>" in tmux.screen(p).rstrip().splitlines()[-1]
                               for p in panes), 30, message="every agent at rest")
        after = counters(w.proc.pid)
        assert w.proc.poll() is None
    finally:
        w.stop()
    got = badges(tiny_home)
    assert got.count("Resumed") == got.count("Continued") == len(crashed) == \
        ROUNDS * CRASHES_PER_ROUND, "every exit seen, each resumed once"
    assert set(got) <= {"Resumed", "Continued", "Skipped"}, got
    fds_before, rss_before = before
    fds_after, rss_after = after
    assert fds_after - fds_before <= 10, (fds_before, fds_after)
    assert rss_after < 250 * MB and rss_after - rss_before < 60 * MB, (rss_before, rss_after)
