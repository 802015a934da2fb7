"""Two agents of one CLI in one folder, started from shells 0.3 s apart (issue 21 item 1):
each agent's session is told from the other's by facts, never by which file was written last.

* the fake agent records its pid in its session file: the crashed one (kill -9) is resumed
  with its own session id, and the other agent is left alone;
* the toy agent (declared only by a provider file from the README) records nothing Pitcrew can
  tell the two apart by: Pitcrew does not type `toyagent --last` (it could resume the other's
  conversation); it writes a `Couldn't resume` row saying why and notifies you.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.test_autopilot_e2e import rows, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
FAKE_DIR, TOY_DIR = ROOT / "fake_agent", ROOT / "toy_cli"


@pytest.fixture
def home(pitcrew_home: Path) -> Path:
    providers = pitcrew_home / "providers"
    providers.mkdir(exist_ok=True)
    for path in (FAKE_DIR / "fakeagent.toml", TOY_DIR / "toyagent.toml"):
        shutil.copy(path, providers / path.name)
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\nquiet_after = 600\n")
    return pitcrew_home


def shells(tmux: TmuxServer, cwd: Path, n: int = 2) -> list[str]:
    panes = []
    for _ in range(n):
        pane = tmux.start("bash --norc --noprofile -i", cwd=cwd, keep_dead=False)
        tmux.type(pane, f"export PATH={shlex.quote(str(FAKE_DIR))}:"
                        f"{shlex.quote(str(TOY_DIR))}:$PATH "
                        f"TOYAGENT_HOME={shlex.quote(str(tmux.root / 'toy-home'))}")
        panes.append(pane)
    return panes


def start_both(tmux: TmuxServer, panes: list[str], command: str) -> None:
    tmux.type(panes[0], command)
    time.sleep(0.3)
    tmux.type(panes[1], command)


def agent(tmux: TmuxServer, pane: str, name: str) -> psutil.Process:
    def find() -> psutil.Process | None:
        root = psutil.Process(tmux.pane(pane).pid)
        return next((p for p in root.children(recursive=True)
                     if any(part.endswith(name) for part in p.cmdline()[:2])), None)
    return wait_until(find, 10, message=lambda: f"{name} in {pane}:\n" + tmux.screen(pane))


def test_the_crashed_one_of_two_fake_agents_is_resumed_with_its_own_session(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    a, b = shells(tmux, tmp_path)
    start_both(tmux, [a, b], "fakeagent")
    ids = [re.search(r"session ([0-9a-f-]{36})", tmux.wait_for_text(p, "fake>")).group(1)
           for p in (a, b)]
    w = watch(tmux)
    try:
        w.wait_for(f"{a}: idle")
        w.wait_for(f"{b}: idle")
        start_both(tmux, [a, b], "work 60")          # each writes; b's file is the newest
        w.wait_for(f"{a}: busy")
        w.wait_for(f"{b}: busy")
        time.sleep(1)
        other = agent(tmux, b, "fakeagent").pid
        os.kill(agent(tmux, a, "fakeagent").pid, signal.SIGKILL)
        resumed = wait_until(lambda: [r for r in rows(home) if r.badge.value == "Resumed"], 40,
                             message=lambda: str([(r.badge.value, r.reason)
                                                  for r in rows(home)]))[0]
        tmux.wait_for_text(a, f"Resumed session {ids[0]}", timeout=20)
    finally:
        w.stop()
    assert resumed.readings["session_id"] == ids[0] != ids[1]
    assert f"--resume {ids[1]}" not in tmux.screen(a)
    assert agent(tmux, b, "fakeagent").pid == other          # the other agent untouched


def test_two_toy_agents_no_fact_tells_apart_pitcrew_waits_and_says_so(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    a, b = shells(tmux, tmp_path)
    start_both(tmux, [a, b], "toyagent")
    tmux.wait_for_text(a, "▸")
    tmux.wait_for_text(b, "▸")
    w = watch(tmux)
    try:
        w.wait_for(f"{a}: idle")
        w.wait_for(f"{b}: idle")
        start_both(tmux, [a, b], "slow 60")
        w.wait_for(f"{a}: busy")
        w.wait_for(f"{b}: busy")
        time.sleep(1)
        os.kill(agent(tmux, a, "toyagent").pid, signal.SIGKILL)
        row = wait_until(lambda: [r for r in rows(home) if r.badge.value == "Couldn't resume"],
                         40, message=lambda: str([(r.badge.value, r.reason)
                                                  for r in rows(home)]))[0]
        w.wait_for("Couldn't resume")
        time.sleep(2)
    finally:
        w.stop()
    assert "does not guess" in row.reason
    assert "Resumed" not in [r.badge.value for r in rows(home)]
    assert "toyagent --last" not in tmux.screen(a) and "--resume" not in tmux.screen(a)
