"""tmux trouble: the server killed and started again mid-incident, a pane killed while it is
being resumed, no tmux binary, and a tmux that hangs or vanishes while Pitcrew runs (every
tmux call has a timeout). The watcher keeps watching through all of it, never resumes into
a pane that is not the agent's, and says what happened in one line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from tests.faults.harness import badges, prompts, rows, start_agent, wait_badges, watch
from tests.support.tmux_server import FAKE_AGENT_DIR, TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


def test_the_server_killed_and_started_again_mid_incident_resumes_nothing_into_it(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux, scale="1")                          # the real 5 s wait before a restart
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash 3 1")
        w.wait_for("Scheduled")
        tmux.tmux.run("kill-server")
        w.wait_for("went away")
        newcomer = start_agent(tmux, tmp_path / "elsewhere" if (tmp_path / "elsewhere").mkdir()
                               is None else tmp_path)   # a new server on the same socket
        w.wait_for("again (a new server")
        time.sleep(6.5)                                  # past the 5 s wait
    finally:
        assert w.stop() == 0
    assert w.proc.returncode == 0
    got = [r for r in rows(home) if r.badge.value != "Scheduled"]
    assert [r.badge.value for r in got] == ["Skipped"], [(r.badge.value, r.reason) for r in got]
    assert "tmux server" in got[0].reason or "pane is gone" in got[0].reason
    assert prompts(tmux) == ["crash 3 1"], "nothing was typed into the new server's pane"
    assert "fake>" in tmux.screen(newcomer)


def test_a_pane_killed_while_it_is_resumed_closes_the_incident_with_a_row(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash 3 1")
        w.wait_for("respawned the pane")
        tmux.tmux.run("kill-pane", "-t", pane)
        w.wait_for(f"{pane}: pane closed")
        time.sleep(2)
        assert w.proc.poll() is None
        other = start_agent(tmux, tmp_path)             # and the watcher still does its job
        w.wait_for(f"{other}: idle")
        tmux.type(other, "crash 3 1")
        wait_until(lambda: badges(home).count("Continued") == 1, 30,
                   message=lambda: str(badges(home)))
    finally:
        assert w.stop() == 0
    mine = [r for r in rows(home) if r.terminal.endswith(f":{pane}")
            and r.badge.value != "Scheduled"]
    assert [r.badge.value for r in mine] in (["Skipped"], ["Couldn't resume"]), mine
    assert not w.saw("Traceback")


def test_no_tmux_binary_is_one_clear_line(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    out = subprocess.run([sys.executable, "-m", "pitcrew.supervisor", "watch"], text=True,
                         capture_output=True, timeout=30,
                         env={**os.environ, "PATH": str(empty)})
    text = out.stdout + out.stderr
    assert out.returncode != 0
    assert text.count("tmux is not installed") == 1 and "Traceback" not in text


def test_a_hung_or_vanished_tmux_mid_run_costs_a_timeout_not_the_watcher(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    real = shutil.which("tmux")
    assert real is not None
    wrapped = tmp_path / "wrapped"
    wrapped.mkdir()
    hang = tmp_path / "hang"
    script = wrapped / "tmux"
    sleep = shutil.which("sleep")
    script.write_text(f'#!/bin/sh\n[ -e "{hang}" ] && exec "{sleep}" 3600\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux, env={"PATH": str(wrapped)})         # tmux is found only there
    try:
        w.wait_for(f"{pane}: idle")
        hang.touch()                                     # every tmux call hangs …
        wait_until(lambda: any("did not answer within" in line for line in w.lines), 30,
                   message=lambda: "\n".join(w.lines))
        hang.unlink()
        script.rename(wrapped / "gone")                  # … then tmux is not there at all
        time.sleep(2)
        (wrapped / "gone").rename(script)
        assert w.proc.poll() is None, "\n".join(w.lines)
        tmux.type(pane, "crash 3 1")
        wait_badges(home, "Resumed", "Continued", timeout=40)
        wait_until(lambda: CONTINUE_MESSAGE in prompts(tmux), 20)
    finally:
        hang.unlink(missing_ok=True)
        w.stop()
    assert prompts(tmux) == ["crash 3 1", CONTINUE_MESSAGE]
    assert not w.saw("Traceback")


# A workspace script as tmuxinator or tmuxp runs one, or a user writes: sessions created,
# windows added, panes split and selected, an agent started in each, old ones closed. (Plain
# `sh` panes: a login bash here runs pyenv's rehash, which queues on one lock for 90 shells.)
WORKSPACES = """
i=1
while [ "$i" -le "$N" ]; do
  $T new-session -d -s "proj$i" -c "$DIR" sh
  $T new-window -t "proj$i" -c "$DIR" sh
  $T split-window -t "proj$i" -c "$DIR" sh
  $T select-layout -t "proj$i" tiled
  $T select-window -t "proj$i:^"
  $T select-pane -t "proj$i:^.0"
  $T send-keys -t "proj$i:^.0" "FAKEAGENT_HOME=$FAKE $AGENT" Enter
  [ "$i" -gt 2 ] && $T kill-session -t "proj$((i - 2))"
  i=$((i + 1))
done
"""


def test_a_script_building_workspaces_while_pitcrew_watches_never_crashes_tmux(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    """tmux 3.2–3.6 crash, the whole server with every agent in it, when such a burst reaches
    a control client that is still connecting; Pitcrew, told of each new session by that very
    burst, connected to it at once. Now it waits for a quiet server and a session that is
    not being built, then watches the new agents as any other."""
    first = start_agent(tmux, tmp_path)
    server = tmux.tmux.server_identity()
    script = tmp_path / "workspaces.sh"
    script.write_text(WORKSPACES)
    w = watch(tmux)
    try:
        w.wait_for(f"{first}: idle")
        subprocess.run(["sh", str(script)], timeout=120, capture_output=True, env={
            **os.environ, "T": f"tmux -L {tmux.name} -f /dev/null", "N": "30",
            "DIR": str(tmp_path), "FAKE": str(tmux.fake_home),
            "AGENT": str(FAKE_AGENT_DIR / "fakeagent")})
        assert tmux.tmux.server_identity() == server, \
            "the tmux server crashed (the script's next command started a fresh one)"
        agents = [p.pane_id for p in tmux.tmux.list_panes() if p.session_name == "proj30"
                  and p.window_index == 0 and p.pane_index == 0]
        assert len(agents) == 1
        w.wait_for(f"{agents[0]}: idle", timeout=30)
        wait_until(lambda: "proj30" in tmux.tmux.run("list-clients", "-F",
                                                     "#{client_session}").stdout.split(),
                   timeout=40, message="Pitcrew's control client on the new session")
        tmux.type(agents[0], "work 3")       # its output reaches Pitcrew through that client
        w.wait_for(f"{agents[0]}: busy (was ", timeout=10)
    finally:
        assert w.stop() == 0
    assert tmux.tmux.server_identity() == server
    assert not [line for line in w.lines if "Traceback" in line]
