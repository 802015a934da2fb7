""""Needs you" end to end: the real `pitcrew watch` on a private tmux server, the fake agent
at a question, a real notification daemon (dunst) on a private session bus, and the user's
own terminal attached in a pty (`script`). The grace period is 2 s here (20 s by default)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e

NOTICE = "needs you: Fake Agent needs you — in "
ASKS = "Do you want to proceed? (y/n)"


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path) -> Path:
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[notifications]\nneeds_you_after = 2\n")
    return pitcrew_home


def pitcrew(tmux: TmuxServer, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PITCREW_TMUX_SOCKET": tmux.name})
    assert out.returncode == 0, out.stderr
    return out.stdout


def agent(tmux: TmuxServer, root: Path) -> tuple[str, str]:
    """A fake agent in its own project folder (a unique name: dunst's history is shared by
    the tests of one worker); returns (pane, folder name)."""
    folder = root / f"proj-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    pane = tmux.start("fakeagent", cwd=folder)
    tmux.wait_for_text(pane, "fake>")
    return pane, folder.name


def watch(tmux: TmuxServer, env: dict[str, str]) -> Running:
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name, **env})
    w.wait_for("Autopilot:")
    tmux.wait_watched()
    return w


def shown(env: dict[str, str], folder: str) -> list[dict[str, str]]:
    """The notifications dunst showed whose body names `folder` (closed into its history)."""
    full = {**os.environ, **env}
    subprocess.run(["dunstctl", "close-all"], env=full, check=True, timeout=30)
    history = json.loads(subprocess.run(["dunstctl", "history"], capture_output=True,
                                        text=True, env=full, check=True, timeout=30).stdout)
    return [{"summary": h["summary"]["data"], "body": h["body"]["data"]}
            for h in history["data"][0] if folder in h["body"]["data"]]


def status_row(tmux: TmuxServer, pane: str) -> dict[str, object]:
    data = json.loads(pitcrew(tmux, "status", "--json"))
    return next(t for t in data["terminals"] if t["pane"] == pane)


@contextlib.contextmanager
def looking_at(tmux: TmuxServer, pane: str) -> Iterator[None]:
    """The user's terminal attached (a pty), showing `pane`."""
    session = tmux.tmux.run("list-sessions", "-F", "#{session_name}").stdout.split()[0]
    user = subprocess.Popen(
        ["script", "-q", "-c", f"tmux -L {tmux.name} attach -t ={session}", "/dev/null"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, env={**os.environ, "TERM": "xterm-256color"})
    try:
        wait_until(lambda: "0" in tmux.tmux.run("list-clients", "-F", "#{client_control_mode}")
                   .stdout.split(), 20, message="the user's client attached")
        tmux.tmux.run("select-window", "-t", pane)
        tmux.tmux.run("select-pane", "-t", pane)
        wait_until(lambda: f"0 {pane}" in tmux.tmux.run(
            "list-clients", "-F", "#{client_control_mode} #{pane_id}").stdout, 20,
            message=f"the user's client showing {pane}")
        yield
    finally:
        os.killpg(user.pid, signal.SIGKILL)
        user.wait(10)


def test_an_agent_at_a_question_gets_one_notification_and_counts_in_status_and_tmux(
        tmux: TmuxServer, home: Path, tmp_path: Path, notifications: dict[str, str]) -> None:
    pane, folder = agent(tmux, tmp_path)
    w = watch(tmux, notifications)
    try:
        w.wait_for(f"{pane}: idle", timeout=30)
        tmux.type(pane, "question")
        tmux.wait_for_text(pane, ASKS)
        w.wait_for(NOTICE + folder, timeout=45)
        wait_until(lambda: pitcrew(tmux, "tmux-status") == "⚑1\n", 30,
                   message=lambda: f"tmux-status: {pitcrew(tmux, 'tmux-status')!r}")
        row = status_row(tmux, pane)
        assert row["attention"] == "needs_you"
        assert isinstance(row["since"], float) and row["since"] <= time.time()
        assert ASKS in str(row["why"]) and str(row["why"]).startswith("screen: ")
        table = pitcrew(tmux, "status")
        assert "needs you" in table.splitlines()[1]
        # the need goes on: still one notification, seconds after the first
        wait_until(lambda: time.time() - float(row["since"]) > 12, 30)   # type: ignore[arg-type]
        assert sum(1 for line in w.lines if NOTICE + folder in line) == 1
    finally:
        w.stop()
    notes = shown(notifications, folder)
    assert [n["summary"] for n in notes] == ["Fake Agent needs you"]
    assert ASKS in notes[0]["body"]
    assert pitcrew(tmux, "tmux-status") == ""          # no watcher: nothing to show


def test_no_notification_for_the_pane_you_are_looking_at(
        tmux: TmuxServer, home: Path, tmp_path: Path, notifications: dict[str, str]) -> None:
    seen, seen_folder = agent(tmux, tmp_path)
    other, other_folder = agent(tmux, tmp_path)
    with looking_at(tmux, seen):
        w = watch(tmux, notifications)
        try:
            w.wait_for(f"{seen}: idle", timeout=30)
            w.wait_for(f"{other}: idle", timeout=30)
            tmux.type(seen, "question")
            tmux.wait_for_text(seen, ASKS)
            w.wait_for(f"{seen}: question", timeout=30)
            tmux.type(other, "question")
            tmux.wait_for_text(other, ASKS)
            # the pane nobody looks at is told about (so the watcher did look at both) …
            w.wait_for(NOTICE + other_folder, timeout=45)
            assert status_row(tmux, seen)["attention"] == "needs_you"
        finally:
            w.stop()
    # … the one on the user's screen never is
    assert not any(seen_folder in line for line in w.lines if "needs you:" in line)
    assert shown(notifications, seen_folder) == []
    assert [n["summary"] for n in shown(notifications, other_folder)] == [
        "Fake Agent needs you"]
