"""Learning about output and new panes from tmux itself, at no cost while nothing happens.

One read-only control-mode client (`tmux -C attach -r -f ignore-size,read-only`) per tmux
session: tmux pushes `%output %<pane> …` lines when a pane prints and `%window-add`,
`%sessions-changed`, … when panes come and go. The client never sends a key and never
changes a window's size. Output notifications are coalesced per pane (one event per
`coalesce` seconds), so a streaming agent costs a few events a second, and an idle one none.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from supervisor.adapters.tmux import Tmux

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
        last: dict[str, float] = {}
        try:
            for line in self.proc.stdout:
                if line.startswith(b"%output "):
                    pane = line[8:line.find(b" ", 8)].decode("ascii", "replace")
                    now = time.monotonic()
                    if now - last.get(pane, 0.0) >= self.coalesce:
                        last[pane] = now
                        self.emit(Output(pane, now))
                elif line.startswith(TOPOLOGY):
                    self.emit(Topology(self.session))
                elif line.startswith(b"%exit"):
                    break
        finally:
            if not self._stopping.is_set():
                self.emit(ControlGone(self.session))

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
