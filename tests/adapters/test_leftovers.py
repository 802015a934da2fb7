"""Leftover checkers: only processes tagged with this data folder are stopped, with their
whole process group; others (another folder's, untagged) are left alone."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from pitcrew.supervisor.adapters import leftovers

SLEEPER = ("import subprocess, sys, time; "
           "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
           "time.sleep(60)")


def start(tag: str | None) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.pop(leftovers.OWNER_VAR, None)
    if tag is not None:
        env[leftovers.OWNER_VAR] = tag
    return subprocess.Popen([sys.executable, "-c", SLEEPER], env=env, start_new_session=True)


def test_only_this_folders_leftover_checkers_are_stopped_with_their_group(tmp_path) -> None:
    mine, other, untagged = start(str(tmp_path)), start("/elsewhere"), start(None)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not psutil.Process(mine.pid).children():
            time.sleep(0.05)
        child = psutil.Process(mine.pid).children()[0]
        assert leftovers.sweep(str(tmp_path)) == 1
        assert mine.wait(5) == -9
        child.wait(5)
        assert other.poll() is None and untagged.poll() is None
    finally:
        for proc in (mine, other, untagged):
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
            proc.wait(5)
