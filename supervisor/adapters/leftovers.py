"""Checker processes a killed Pitcrew left running.

A checker runs in its own session (so its whole process group can be stopped at its budget),
which also means it outlives a `kill -9` of the Pitcrew that started it: a hung checker would
go on for as long as it hangs. Each checker is started with `PITCREW_CHECKER_OF` naming the
data folder of the Pitcrew that runs it; only one supervisor runs per data folder (the lock),
and only the supervisor runs checkers, so when a supervisor starts, every process still
carrying its folder's tag is a leftover: its process group is killed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import tempfile

import psutil

log = logging.getLogger("pitcrew")

OWNER_VAR = "PITCREW_CHECKER_OF"
WORKDIR_PREFIX = "pitcrew-checker-"   # checker_cli runs each checker in a fresh such folder


def sweep(owner: str) -> int:
    """Kill the process groups of checkers tagged with `owner`; how many groups.

    Only a checker's own group is ever killed: a tagged process counts only when it works in
    a checker's temporary folder and leads its own session's group (as every checker does),
    never one that shares our session — anything else Pitcrew started inherits the tag too
    (a tmux client it left behind lives in the group of the shell that started Pitcrew)."""
    groups: set[int] = set()
    me, my_session = os.getpid(), os.getsid(0)
    workdirs = os.path.join(tempfile.gettempdir(), WORKDIR_PREFIX)
    for proc in psutil.process_iter(["pid"]):
        if proc.pid == me:
            continue
        with contextlib.suppress(psutil.Error, OSError):
            if proc.environ().get(OWNER_VAR) != owner or not proc.cwd().startswith(workdirs):
                continue
            session, group = os.getsid(proc.pid), os.getpgid(proc.pid)
            if session == group and session != my_session:
                groups.add(group)
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    if groups:
        log.info("stopped %d checker(s) a previous Pitcrew left running", len(groups))
    return len(groups)
