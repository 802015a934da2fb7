"""One control-mode client per tmux session, connected only while the server is quiet.

Why the wait: tmux 3.3a–3.7 crash — the whole server, every agent in it — when certain
notifications reach a control client that has said it is one but has not finished connecting
(`control_write` with no `control_state`). Those notifications go to every control client,
whatever its session: a session created or closed, a window or pane selected (`new-window`
and `split-window` select one), copy mode, a client detaching, a session renamed. A script
that builds a workspace (tmuxinator, tmuxp, a user's own `tmux new-session -d …; tmux
split-window …`) sends a burst of exactly those, and Pitcrew, told of the new session by
that burst, would connect in the middle of it. So a new session gets its client only when

* the server has said nothing for SETTLE seconds (`news()`: the loop calls it for every
  topology line and every client that ended), and
* the session is not young: created (tmux's `session_created`, whole seconds) YOUNG seconds
  ago or more, or — where that time cannot be trusted (another host's clock) — first listed
  here that long ago;

or once it has waited MAX_WAIT (a server that never goes quiet is still watched). Meanwhile
`settled` is False and the loop lists panes every second, so a deferred session is picked up
within a second of the quiet; screens are read by the fallback until then.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, Protocol, TypeVar

SETTLE = 1.0      # seconds without topology news before a new client connects
YOUNG = 3.0       # seconds: a session created since is still being built (created is floored)
MAX_WAIT = 30.0   # seconds a new session waits for quiet at most


class Client(Protocol):
    def stop(self) -> None: ...


C = TypeVar("C", bound=Client)


class ControlSessions(Generic[C]):
    def __init__(self, connect: Callable[[str], C | None], mono: Callable[[], float],
                 wall: Callable[[], float], trust_created: bool = True) -> None:
        """`connect(session)` starts a client and returns it once attached, or None.
        `trust_created`: whether `session_created` is on this machine's clock."""
        self.connect, self.mono, self.wall = connect, mono, wall
        self.trust_created = trust_created
        self.controls: dict[str, C] = {}
        self.first_listed: dict[str, float] = {}    # a waiting session → when (monotonic)
        self.last_news = -1e9
        self.synced = False

    def news(self) -> None:
        """tmux said something changed: the server is busy now."""
        self.last_news = self.mono()

    @property
    def settled(self) -> bool:
        """Every session listed last has its client (and at least one session exists)."""
        return bool(self.controls) and not self.first_listed

    def sync(self, sessions: Mapping[str, int]) -> None:
        """`sessions`: every session's name → its `session_created` (epoch seconds, 0 when
        unknown). Clients of closed sessions stop; new ones connect when it is safe."""
        for name in self.controls.keys() - sessions.keys():
            self.controls.pop(name).stop()
        mono, first = self.mono(), not self.synced
        self.synced = True
        # what the first listing finds was there before us: never waited for, never young
        # by that measure (a session created just now still is by its creation time)
        seen = mono - YOUNG if first else mono
        self.first_listed = {name: self.first_listed.get(name, seen)
                             for name in sessions.keys() - self.controls.keys()}
        busy = mono - self.last_news < SETTLE
        for name in sorted(self.first_listed):
            waited = mono - self.first_listed[name]
            if waited < MAX_WAIT and (busy or self._young(sessions[name], waited)):
                continue
            client = self.connect(name)
            if client is not None:
                self.controls[name] = client
                del self.first_listed[name]

    def _young(self, created: int, waited: float) -> bool:
        if self.trust_created and created > 0:
            return 0 <= self.wall() - created < YOUNG
        return waited < YOUNG

    def gone(self, session: str) -> None:
        """Its client ended by itself (the session closed, the server went away)."""
        self.controls.pop(session, None)
        self.news()

    def stop(self) -> None:
        for client in self.controls.values():
            client.stop()
        self.controls.clear()
        self.first_listed.clear()
        self.synced = False     # a host back after a drop: its sessions are not new
