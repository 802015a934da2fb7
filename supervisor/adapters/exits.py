"""Knowing the moment an agent process exits, without polling tmux.

On Linux each watched pid gets a pidfd (`os.pidfd_open`); one thread polls them all and
reports an exit within milliseconds. Elsewhere (or if pidfds are refused) the same thread
checks the watched pids every `interval` seconds with a cheap liveness probe (no subprocess).
"""

from __future__ import annotations

import logging
import os
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass

from pitcrew.supervisor.adapters.processes import is_alive

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ProcessGone:
    key: str
    pid: int


class ExitWatcher(threading.Thread):
    def __init__(self, emit: Callable[[object], None], interval: float = 0.25) -> None:
        super().__init__(name="exit-watcher", daemon=True)
        self.emit = emit
        self.interval = interval
        self._lock = threading.Lock()
        self._watched: dict[int, tuple[str, float | None, int | None]] = {}  # pid → key, ctime, fd
        self._wake_r, self._wake_w = os.pipe()
        self._halt = threading.Event()   # (Thread has its own _stop)
        self._pidfd = hasattr(os, "pidfd_open")

    def watch(self, pid: int, key: str, create_time: float | None = None) -> None:
        with self._lock:
            if pid in self._watched:
                return
            fd = None
            if self._pidfd:
                try:
                    fd = os.pidfd_open(pid)
                except OSError:
                    fd = None
            self._watched[pid] = (key, create_time, fd)
        os.write(self._wake_w, b"w")
        if not is_alive(pid, create_time):
            self._gone(pid)

    def unwatch(self, pid: int) -> None:
        with self._lock:
            entry = self._watched.pop(pid, None)
        if entry and entry[2] is not None:
            os.close(entry[2])

    def watched(self) -> set[int]:
        with self._lock:
            return set(self._watched)

    def stop(self) -> None:
        self._halt.set()
        os.write(self._wake_w, b"x")

    def _gone(self, pid: int) -> None:
        with self._lock:
            entry = self._watched.pop(pid, None)
        if entry is None:
            return
        key, _, fd = entry
        if fd is not None:
            os.close(fd)
        self.emit(ProcessGone(key, pid))

    def run(self) -> None:
        while not self._halt.is_set():
            poller = select.poll()
            poller.register(self._wake_r, select.POLLIN)
            with self._lock:
                by_fd = {fd: pid for pid, (_, _, fd) in self._watched.items() if fd is not None}
                polled = {pid: ct for pid, (_, ct, fd) in self._watched.items() if fd is None}
            for fd in by_fd:
                poller.register(fd, select.POLLIN)
            timeout = int(self.interval * 1000) if polled else -1
            for fd, _ in poller.poll(timeout):
                if fd == self._wake_r:
                    os.read(self._wake_r, 64)
                elif fd in by_fd:
                    self._gone(by_fd[fd])
            for pid, create_time in polled.items():
                if not is_alive(pid, create_time):
                    self._gone(pid)
        os.close(self._wake_r)
        os.close(self._wake_w)
