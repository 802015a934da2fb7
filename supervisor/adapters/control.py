"""Learning about output and new panes from tmux itself, at no cost while nothing happens.

One read-only control-mode client (`tmux -C attach -r -f ignore-size,read-only`) per tmux
session: tmux pushes `%output %<pane> …` lines when a pane prints and `%window-add`,
`%sessions-changed`, … when panes come and go. The client never sends a key and never
changes a window's size. Output notifications are coalesced per pane (at most one event per
`coalesce` seconds, and always one after the last output of a burst, so the screen a burst
ends on is always read), so a streaming agent costs a few events a second, an idle one none.
"""

from __future__ import annotations

import logging
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from pitcrew.supervisor.adapters.tmux import Tmux

log = logging.getLogger(__name__)

TOPOLOGY = (
    b"%window-add", b"%window-close", b"%unlinked-window-add", b"%unlinked-window-close",
    b"%sessions-changed", b"%session-window-changed", b"%layout-change", b"%pane-mode-changed",
    b"%window-pane-changed", b"%session-changed",
)


@dataclass(frozen=True, slots=True)
class Output:
    pane_id: str
    at: float          # monotonic


@dataclass(frozen=True, slots=True)
class Topology:
    session: str


@dataclass(frozen=True, slots=True)
class ControlGone:
    session: str


class ControlClient(threading.Thread):
    def __init__(self, tmux: Tmux, session: str, emit: Callable[[object], None],
                 coalesce: float = 0.25) -> None:
        super().__init__(name=f"tmux-control-{session}", daemon=True)
        self.tmux = tmux
        self.session = session
        self.emit = emit
        self.coalesce = coalesce
        self.proc: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()

    def start_client(self) -> bool:
        cmd = [*self.tmux._base(), "-C", "attach-session", "-r", "-f", "ignore-size,read-only",
               "-t", f"={self.session}"]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL)
        except OSError as exc:
            log.warning("cannot watch tmux session %s: %s", self.session, exc)
            return False
        self.start()
        return True

    def run(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        throttle = Throttle(self.coalesce)
        buffer = b""
        try:
            while True:
                for pane, at in throttle.due(time.monotonic()):
                    self.emit(Output(pane, at))
                ready, _, _ = select.select([fd], [], [], throttle.wait(time.monotonic()))
                if not ready:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                *lines, buffer = (buffer + chunk).split(b"\n")
                if not self.handle_lines(lines, throttle):
                    break
        finally:
            for pane, at in throttle.flush():
                self.emit(Output(pane, at))
            if not self._stopping.is_set():
                self.emit(ControlGone(self.session))

    def handle_lines(self, lines: list[bytes], throttle: Throttle) -> bool:
        """False once tmux says the client is done."""
        for line in lines:
            if line.startswith(b"%output "):
                pane = line[8:line.find(b" ", 8)].decode("ascii", "replace")
                now = time.monotonic()
                if throttle.offer(pane, now):
                    self.emit(Output(pane, now))
            elif line.startswith(TOPOLOGY):
                self.emit(Topology(self.session))
            elif line.startswith(b"%exit"):
                return False
        return True

    def stop(self) -> None:
        self._stopping.set()
        proc = self.proc
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()      # tmux detaches a control client on EOF
            proc.wait(2)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()


class Throttle:
    """At most one event per pane per `every` seconds: the first of a burst at once, the
    last one when its window closes. Dropping the trailing edge would leave the supervisor
    looking at the screen from the start of a burst (a typed prompt) and never at its end
    (the login menu it printed 0.1 s later)."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.sent: dict[str, float] = {}
        self.pending: dict[str, float] = {}

    def offer(self, pane: str, now: float) -> bool:
        if now - self.sent.get(pane, -1e18) >= self.every:
            self.sent[pane] = now
            self.pending.pop(pane, None)
            return True
        self.pending[pane] = now
        return False

    def due(self, now: float) -> list[tuple[str, float]]:
        out = [(pane, at) for pane, at in self.pending.items()
               if now - self.sent[pane] >= self.every]
        for pane, _ in out:
            del self.pending[pane]
            self.sent[pane] = now
        return out

    def wait(self, now: float) -> float | None:
        """Seconds until the next pending event is due; None (block) when nothing is."""
        if not self.pending:
            return None
        return max(0.0, min(self.sent[p] + self.every for p in self.pending) - now)

    def flush(self) -> list[tuple[str, float]]:
        out = list(self.pending.items())
        self.pending.clear()
        return out
