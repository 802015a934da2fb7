"""Learning about output and new panes from tmux itself, at no cost while nothing happens.

One control-mode client (`tmux -C attach -f ignore-size`) per tmux session. The client never
sends a key and never changes a window's size; the only command it sends is a read of a pane
that printed (`display-message -p`). It is *not* read-only, on purpose: a command the user
runs from a shell (`tmux send-keys -t %3 q` to a pane in copy mode) acts on tmux's "best
client" — the one with the newest activity, and a client that never types keeps its start
time as its activity, so Pitcrew's, started after the user attached, is that client. A key
bound in copy mode, sent through a read-only client, fails with "client is read-only" (tmux
3.3a `key_bindings_dispatch`); through this one it runs, as it would without Pitcrew.
What it reports (`emit`):

* `Output(pane)` when a pane printed. Coalesced per pane (at most one event per `coalesce`
  seconds, and always one after the last output of a burst, so the screen a burst ends on is
  always read): a streaming agent costs a few events a second, an idle one none.
* `Topology(session, pane_id=None)` at once when panes, windows or sessions come or go
  (`%window-add`, `%unlinked-window-add`, `%sessions-changed`, `%layout-change` for a split,
  `%window-close`, …), and `Topology(session, pane_id)` within about a second when the
  process or command of a pane that prints changed (the user typed `claude` at the shell of
  a pane that already existed: an agent prints as it starts). A pane is read when it prints,
  at most once per CHECK_EVERY — the first output of a burst at once and, once its window
  closes, again after the burst's last — so an idle pane costs nothing. tmux's own way, a
  format subscription per pane (`refresh-client -B`), had tmux wake once a second per
  session and read every pane's command from /proc, for every pane, idle or not: most of
  what an idle fleet cost (docs/performance.md). (tmux's "all panes" subscription, `%*`,
  also crashes tmux before 3.7 — the whole server — when its timer fires after the
  session was closed and before the client has gone.)
  Focus changes (`%session-window-changed`, `%window-pane-changed`) count too: cheap, and a
  loop that rescans on them sees a freshly selected pane at once. `%pane-mode-changed` (copy
  mode on or off) does not: no pane came or went (`PaneInfo.in_mode` says whether typing
  would land in copy mode).
* `Activity(session)` for the other lines tmux sends to every control client, whatever its
  session (copy mode on or off, a client detached, a session renamed, a paste buffer set or
  deleted by tmux 3.4–3.6): nothing to list again, but, like a topology line, a sign that
  the server is busy — no new client connects now (service/control_sessions.py says why).
* `Attached(session, panes)` once, when tmux has attached the client.
* `ControlGone(session, reason, server_gone)` once, when the client ended without `stop()`:
  the session closed, or — `server_gone` — the whole tmux server went away (killed, crashed,
  or its last session closed), which the loop logs as "the tmux server went away". Every
  client of a vanished server reports it.
"""

from __future__ import annotations

import logging
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pitcrew.supervisor.adapters.tmux import SEP, Tmux
from pitcrew.supervisor.core.errors import TmuxError

log = logging.getLogger(__name__)

TOPOLOGY = (
    b"%window-add", b"%window-close", b"%unlinked-window-add", b"%unlinked-window-close",
    b"%sessions-changed", b"%session-window-changed", b"%layout-change",
    b"%window-pane-changed", b"%session-changed",
)
FOCUS = (b"%session-window-changed", b"%window-pane-changed")   # no pane came or went
ACTIVITY = (b"%pane-mode-changed", b"%client-detached", b"%session-renamed",
            b"%client-session-changed", b"%paste-buffer-changed", b"%paste-buffer-deleted")
CHECK = b"pitcrew-pane "   # how a pane's reply to its read starts (no tmux line does)
CHECK_EVERY = 1.0         # seconds: at most one read per printing pane
# How long `start_client` waits for its client to be attached. tmux 3.2–3.6 crash (the whole
# server, every pane with it) when a notification reaches a control client that has said it is
# one but has not finished connecting (`control_write` with no `control_state`): Pitcrew must
# not change anything on a server while one of its control clients is still connecting.
ATTACH_WAIT = 5.0
# What a change of is reported per pane: a new process (respawn), a death, another command.
PANE_WATCH = "#{pane_pid}:#{pane_dead}:#{pane_current_command}"


@dataclass(frozen=True, slots=True)
class Output:
    pane_id: str
    at: float          # monotonic


@dataclass(frozen=True, slots=True)
class Topology:
    """Panes may have come, gone or changed in `session`: list them again. `pane_id` is set
    when only that pane's process or command changed."""

    session: str
    pane_id: str | None = None


@dataclass(frozen=True, slots=True)
class Activity:
    """tmux reported a change that moves no pane: the server is busy now."""

    session: str


@dataclass(frozen=True, slots=True)
class Attached:
    """The client of `session` is attached: from now on its `panes` report their output.
    What they printed before (a session's client connects only once it is quiet, see
    service/control_sessions.py) is read once now."""

    session: str
    panes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ControlGone:
    """The control client of `session` ended. `server_gone`: the tmux server itself is gone
    (not just the session); `reason` is what tmux's `%exit` line said, if anything."""

    session: str
    reason: str = ""
    server_gone: bool = False


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
        self._panes: dict[str, str] = {}     # pane → its last PANE_WATCH value
        self._exit_reason = ""
        self._joined = False                 # tmux said the client is attached
        self._attached = threading.Event()

    def start_client(self) -> bool:
        """Start the client and return once tmux has attached it (or it ended, or ATTACH_WAIT
        passed), so that nothing Pitcrew does next lands in tmux's connecting window (see
        ATTACH_WAIT)."""
        try:
            self._panes = self._pane_values()   # before attaching: only changes are news
            self.proc = subprocess.Popen(self._command(), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except (OSError, TmuxError) as exc:
            log.warning("cannot watch tmux session %s%s: %s", self.session, self._where(), exc)
            return False
        self.start()
        if not self._attached.wait(ATTACH_WAIT):
            log.info("tmux session %s%s: the control client is slow to attach", self.session,
                     self._where())
        return True

    def _command(self) -> list[str]:
        """`-E`: attaching must not copy Pitcrew's DISPLAY or SSH_AUTH_SOCK into the user's
        session environment (tmux's `update-environment`)."""
        return [*self.tmux._base(), *self.attach_args()]

    def attach_args(self) -> list[str]:
        return ["-C", "attach-session", "-E", "-f", "ignore-size", "-t", f"={self.session}"]

    def _where(self) -> str:
        return ""

    def _check(self, panes: Iterable[str]) -> None:
        """Ask tmux what runs in `panes` now; each answers with one CHECK line in the reply
        block (`handle_lines`). Asked through this client: no process started, and a pane
        gone meanwhile only gets an `%error` block."""
        lines = [f"display-message -p -t {p} '{CHECK.decode()}#{{pane_id}} {PANE_WATCH}'\n"
                 for p in panes if p.startswith("%")]
        if not lines or self.proc is None or self.proc.stdin is None:
            return
        try:
            self.proc.stdin.write("".join(lines).encode())
            self.proc.stdin.flush()
        except (OSError, ValueError):   # the client is already gone (or stopped)
            pass

    def _pane_values(self) -> dict[str, str]:
        result = self.tmux.run("list-panes", "-s", "-t", f"={self.session}",
                               "-F", f"#{{pane_id}}{SEP}{PANE_WATCH}")
        rows = (line.split(SEP, 1) for line in result.stdout.splitlines()) if result.ok else ()
        return {row[0]: row[1] for row in rows if len(row) == 2}

    def run(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        throttle = Throttle(self.coalesce)
        checks = Throttle(CHECK_EVERY)
        buffer = b""
        try:
            while True:
                now = time.monotonic()
                for pane, at in throttle.due(now):
                    self.emit(Output(pane, at))
                self._check(pane for pane, _ in checks.due(now))
                waits = [w for w in (throttle.wait(now), checks.wait(now)) if w is not None]
                ready, _, _ = select.select([fd], [], [], min(waits, default=None))
                if not ready:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                *lines, buffer = (buffer + chunk).split(b"\n")
                if not self.handle_lines(lines, throttle, checks):
                    break
        finally:
            self._attached.set()
            for pane, at in throttle.flush():
                self.emit(Output(pane, at))
            if not self._stopping.is_set():
                self.emit(ControlGone(self.session, self._exit_reason, self._server_gone()))

    def _server_gone(self) -> bool:
        """No session left means no server: tmux exits with its last session (and one shutting
        down after `kill-server` may still answer, with no sessions)."""
        try:
            return self.tmux.server_identity() is None
        except TmuxError:
            return True

    def handle_lines(self, lines: list[bytes], throttle: Throttle,
                     checks: Throttle | None = None) -> bool:
        """False once tmux says the client is done. `checks`: when each printing pane is
        read (none: never)."""
        for line in lines:
            if line.startswith(b"%output "):
                pane = line[8:line.find(b" ", 8)].decode("ascii", "replace")
                now = time.monotonic()
                if throttle.offer(pane, now):
                    self.emit(Output(pane, now))
                if checks is not None and checks.offer(pane, now):
                    self._check((pane,))
            elif line.startswith(TOPOLOGY):
                if line.startswith(b"%session-changed") and not self._joined:
                    self._joined = True
                    self._attached.set()
                    self.emit(Attached(self.session, tuple(sorted(self._panes))))
                self.emit(Topology(self.session))
            elif line.startswith(ACTIVITY):
                self.emit(Activity(self.session))
            elif line.startswith(CHECK):
                self._pane_seen(line[len(CHECK):].decode("utf-8", "backslashreplace"))
            elif line.startswith(b"%exit"):
                self._exit_reason = line[6:].decode("utf-8", "backslashreplace").strip()
                return False
        return True

    def _pane_seen(self, reply: str) -> None:
        """`%3 PID:DEAD:COMMAND`, a pane's answer to `_check`. A pane not listed when the
        client started (opened since) has no baseline: its first answer is news too."""
        pane, _, value = reply.partition(" ")
        if not pane.startswith("%") or self._panes.get(pane) == value:
            return
        self._panes[pane] = value
        self.emit(Topology(self.session, pane))

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
