"""One acting supervisor per user: an advisory lock on a file in the data folder.

The holder writes its pid and start time into the file, so a second `pitcrew watch` (or tray
app) can say exactly which process holds it. The kernel drops the lock when the holder dies,
even on kill -9, so a stale file never blocks a restart.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Holder:
    pid: int
    started: float
    command: str

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        return f"pid {self.pid} ({self.command}, since {when})"


class SupervisorLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, command: str) -> Holder | None:
        """Take the lock; None on success, else who holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            return holder or Holder(0, 0.0, "unknown")
        me = Holder(os.getpid(), time.time(), command)
        os.ftruncate(fd, 0)
        record = {"pid": me.pid, "started": me.started, "command": me.command}
        os.pwrite(fd, json.dumps(record).encode(), 0)
        self._fd = fd
        return None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)   # closing drops the flock
            self._fd = None


def _read(fd: int) -> Holder | None:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return Holder(int(data["pid"]), float(data["started"]), str(data["command"]))
    except (ValueError, KeyError, TypeError):
        return None
