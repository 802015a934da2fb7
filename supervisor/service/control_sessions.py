"""One control-mode client per tmux session, connected only while the server is quiet.

Why the wait: tmux 3.2–3.6 crash — the whole server, every agent in it — when certain
notifications reach a control client that has said it is one but has not finished connecting
(`control_write` with no `control_state`). Those notifications go to every control client,
whatever its session: a session created or closed, a window or pane selected (`new-window`
and `split-window` select one), copy mode, a client detaching, a session renamed. A script
that builds a workspace (tmuxinator, tmuxp, a user's own `tmux new-session -d …; tmux
split-window …`) sends a burst of exactly those, and Pitcrew, told of the new session by
that burst, would connect in the middle of it. So a new session gets its client only when

* the server has said nothing for SETTLE seconds (`news()`: every topology line, every
  other line tmux sends all clients, every client that ended or was stopped, and a listing
  whose sessions changed — which needs no client to notice), and
* no session is young: created (tmux's `session_created`, whole seconds) YOUNG seconds ago
  or more, or — where that time cannot be trusted (another host's clock) — first listed
  here that long ago;

or once it has waited MAX_WAIT (a server that never goes quiet is still watched). Meanwhile
`settled` is False and the loop lists panes every second and reads the waiting sessions'
screens each time, so their agents are watched, only less promptly, until the client is
attached (then `Attached` reads them once more).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, Protocol, TypeVar

from pitcrew.supervisor.adapters.control import Activity, ControlGone, Topology

SETTLE = 1.0      # seconds without topology news before a new client connects
YOUNG = 3.0       # seconds: a session created since is still being built (created is floored)
MAX_WAIT = 30.0   # seconds a new session waits for quiet at most
RETRY_MAX = 30.0  # seconds between tries at most, for a client that failed to connect


class Client(Protocol):
    def stop(self) -> None: ...


C = TypeVar("C", bound=Client)


def busy_sign(event: object) -> bool:
    """Whether a control client's event says the server is busy: a topology line (not a
    pane's own command change), any other line tmux sends every client, a client ended."""
    return isinstance(event, Activity | ControlGone) or \
        (isinstance(event, Topology) and event.pane_id is None)


class ControlSessions(Generic[C]):
    def __init__(self, connect: Callable[[str], C | None], mono: Callable[[], float],
                 wall: Callable[[], float], trust_created: bool = True) -> None:
        """`connect(session)` starts a client and returns it once attached, or None.
        `trust_created`: whether `session_created` is on this machine's clock."""
        self.connect, self.mono, self.wall = connect, mono, wall
        self.trust_created = trust_created
        self.controls: dict[str, C] = {}
        self.listed: dict[str, float] = {}    # every session listed → when first (monotonic)
        self.listing: frozenset[str] | None = None   # the sessions of the last listing
        self.last_news = -1e9
        self.failed: dict[str, tuple[int, float]] = {}   # session → (failures, next try)

    def news(self) -> None:
        """The server is busy now. Called from the clients' own threads (`busy_sign`), so a
        line tmux printed counts at once, not when the loop's queue gets to it."""
        self.last_news = self.mono()

    def heard(self, event: object) -> bool:
        """A client's event, on its own thread: news if it is a `busy_sign`. Whether it
        goes on to the loop (an `Activity` has nothing else to it)."""
        if busy_sign(event):
            self.news()
        return not isinstance(event, Activity)

    @property
    def waiting(self) -> set[str]:
        """Sessions listed last that have no client yet."""
        return self.listed.keys() - self.controls.keys()

    @property
    def settled(self) -> bool:
        """Every session listed last has its client (and at least one session exists)."""
        return bool(self.controls) and not self.waiting

    def sync(self, sessions: Mapping[str, int]) -> set[str]:
        """`sessions`: every session's name → its `session_created` (epoch seconds, 0 when
        unknown). Clients of closed sessions stop; new ones connect when it is safe. Returns
        the sessions still waiting (their panes are read on each listing meanwhile)."""
        closed = self.controls.keys() - sessions.keys()
        for name in closed:
            self.controls.pop(name).stop()     # tmux tells every client it detached: news
        listing = frozenset(sessions)
        if closed or (self.listing is not None and listing != self.listing):
            self.news()                         # news even when no client is there to say
        self.listing = listing
        mono = self.mono()
        self.listed = {name: self.listed.get(name, mono) for name in sessions}
        self.failed = {name: f for name, f in self.failed.items() if name in sessions}
        # one session being built makes the whole server busy: its notifications reach
        # every connecting client, whichever session that client is for
        young = any(self._young(sessions[name], mono - self.listed[name]) for name in sessions)
        for name in sorted(self.waiting):
            now = self.mono()               # a connect can take seconds: look again each time
            if now - self.listed[name] < MAX_WAIT and (young or now - self.last_news < SETTLE):
                continue
            failures, next_try = self.failed.get(name, (0, now))
            if now < next_try:
                continue
            client = self.connect(name)
            if client is not None:
                self.controls[name] = client
                self.failed.pop(name, None)
            else:    # 1, 2, 4 … 30 s apart: its screens are read at each listing meanwhile
                wait = min(2.0 ** min(failures, 8), RETRY_MAX)
                self.failed[name] = (failures + 1, self.mono() + wait)
        return self.waiting

    def _young(self, created: int, listed_for: float) -> bool:
        if self.trust_created and created > 0:
            return -1 < self.wall() - created < YOUNG     # -1: a clock stepped back a little
        return listed_for < YOUNG

    def gone(self, session: str) -> None:
        """Its client ended by itself (the session closed, the server went away)."""
        self.controls.pop(session, None)
        self.news()

    def stop(self) -> None:
        """Stop every client (Pitcrew stops, or the host's link dropped: when it is back,
        its sessions wait as new ones do, since their age there cannot be told)."""
        for client in self.controls.values():
            client.stop()
        self.controls.clear()
        self.listed.clear()
        self.failed.clear()
        self.listing = None
