"""The incident report of a real run: `pitcrew watch` resumes a crashed fake agent in a real
tmux pane, then `pitcrew report` shows that incident from the ledger the watcher wrote, the
session pinned in state.json, and the tokens the agent recorded in its session file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_autopilot_e2e import session_records, start_agent, wait_badges, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path) -> Path:
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\nquiet_after = 10\n")
    return pitcrew_home


def test_the_report_shows_a_real_resumed_crash_with_its_tokens(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "work 0.2")                     # one finished task: tokens
        wait_until(lambda: any(r["type"] == "done" for r in session_records(tmux)), 20)
        tmux.type(pane, "crash 3 0.5")
        wait_badges(home, "Resumed", "Continued", timeout=60)
        # the continue message is a task too: wait until the resumed agent finished it
        wait_until(lambda: sum(r["type"] == "done" for r in session_records(tmux)) == 2, 30)
    finally:
        assert w.stop() == 0
        print(*w.lines, sep="\n")
    env = {**os.environ, "FAKEAGENT_HOME": str(tmux.fake_home)}
    env.pop("DISPLAY", None)
    out = subprocess.run([sys.executable, "-m", "pitcrew.supervisor", "report", "--json"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    [t] = json.loads(out.stdout)["terminals"]
    assert t["agent"] == "Fake Agent" and t["terminal"].endswith(pane)
    [incident] = t["incidents"]
    assert (incident["number"], incident["trigger"], incident["prompt"]) == (
        1, "process exited", "crash 3 0.5")
    assert [r["badge"] for r in incident["rows"]][-2:] == ["Resumed", "Continued"]
    # one crash, one restart: the continue typed into the resumed agent is part of the resume
    assert sum(h["restarts"] for h in t["restarts_per_hour"]) == 1
    done = [r for r in session_records(tmux) if r["type"] == "done"]
    assert t["tokens"]["calls"] == 2
    assert t["tokens"]["total"] == sum(r["usage"]["input_tokens"] + r["usage"]["output_tokens"]
                                       for r in done)
