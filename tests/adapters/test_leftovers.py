"""Leftover checkers: only processes tagged with this data folder are stopped, with their
whole process group; others (another folder's, untagged) are left alone."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time

import psutil

from pitcrew.supervisor.adapters import leftovers

SLEEPER = ("import subprocess, sys, time; "
           "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
           "time.sleep(60)")


def start(tag: str | None, own_session: bool = True) -> subprocess.Popen[bytes]:
    """A checker-like process (and its child) in a checker's temporary folder."""
    env = dict(os.environ)
    env.pop(leftovers.OWNER_VAR, None)
    if tag is not None:
        env[leftovers.OWNER_VAR] = tag
    workdir = tempfile.mkdtemp(prefix=leftovers.WORKDIR_PREFIX)
    return subprocess.Popen([sys.executable, "-c", SLEEPER], env=env, cwd=workdir,
                            start_new_session=own_session)


def test_only_this_folders_leftover_checkers_are_stopped_with_their_group(tmp_path) -> None:
    mine, other, untagged = start(str(tmp_path)), start("/elsewhere"), start(None)
    ours = start(str(tmp_path), own_session=False)   # tagged, but in our own session: never
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not psutil.Process(mine.pid).children():
            time.sleep(0.05)
        child = psutil.Process(mine.pid).children()[0]
        assert leftovers.sweep(str(tmp_path)) == 1
        assert mine.wait(5) == -9
        child.wait(5)
        assert other.poll() is None and untagged.poll() is None and ours.poll() is None
    finally:
        for proc in (mine, other, untagged, ours):
            with contextlib.suppress(psutil.Error):
                for child in psutil.Process(proc.pid).children(recursive=True):
                    child.kill()
            proc.kill()
            proc.wait(5)
