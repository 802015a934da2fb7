"""The fleet record: what Pitcrew needs to put every agent back where it was after the tmux
server (or the machine) restarted. Plain frozen records and the rule that keeps them;
`store/fleet_file.py` reads and writes them (fleet.json), `service/fleet.py` keeps them while
watching, `core/restore_plan.py` plans a restore from them.

Theory of operation
-------------------
1. The unit is a tmux window (session name + window index). A window is recorded only when
   one of its panes runs an agent; then every pane of it is (index and folder), with the
   window's name and layout, so the window comes back whole.
2. Each window carries the identity of the tmux server it was seen on (`server`,
   "<pid>@<start time>"). What the current server shows replaces what was recorded from it:
   an agent that ended, or a window closed, while its server ran is gone from the record.
3. A window recorded from another server (before a restart) is kept until its place exists on
   the current server (restored, or made by the user): from then on the current server's view
   of that place wins.
4. With no server running, the record stays as it is.

An agent's `launch.env` is its replayable environment (it may hold API keys): the record is
private (fleet.json is created 0600), never in the ledger or a log line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Launched:
    """How an agent was started, as much of it as outlives its process: typed at an
    interactive shell (`style` "shell", `shell` its name) or the pane's own command ("pane");
    the agent's own program (argv prefix, first element absolute), folder and environment."""

    style: str
    program: tuple[str, ...]
    cwd: str
    env: Mapping[str, str] = field(default_factory=dict)
    shell: str | None = None


@dataclass(frozen=True, slots=True)
class AgentPlace:
    """One agent in a pane of its window: its CLI (provider name), session and running task
    (None: it was idle)."""

    pane: int
    provider: str
    launch: Launched
    session_id: str | None = None
    task: str | None = None
    agent: str = ""           # the CLI's display name, for messages

    @property
    def mid_task(self) -> bool:
        return self.task is not None


@dataclass(frozen=True, slots=True)
class PanePlace:
    index: int
    cwd: str


@dataclass(frozen=True, slots=True)
class WindowPlace:
    session: str
    index: int
    name: str
    layout: str                       # tmux's `#{window_layout}`
    panes: tuple[PanePlace, ...]      # in pane-index order
    agents: tuple[AgentPlace, ...]
    server: str                       # "<pid>@<start time>" of the server it was seen on

    @property
    def place(self) -> tuple[str, int]:
        return (self.session, self.index)

    @property
    def target(self) -> str:
        return f"{self.session}:{self.index}"


def merge(recorded: Iterable[WindowPlace], seen: Iterable[WindowPlace], server: str | None,
          occupied: Iterable[tuple[str, int]]) -> tuple[WindowPlace, ...]:
    """The record after a look at the current server (rules 2–4 above). `seen`: the windows
    with an agent on it now; `occupied`: every (session, window index) it has now."""
    if server is None:
        return tuple(recorded)
    taken = set(occupied) | {w.place for w in seen}
    kept = [w for w in recorded if w.server != server and w.place not in taken]
    return tuple(sorted([*kept, *seen], key=lambda w: (w.session, w.index)))


def from_before(recorded: Iterable[WindowPlace], server: str | None) -> tuple[WindowPlace, ...]:
    """The windows recorded from another server than the current one (a restart ago)."""
    return tuple(w for w in recorded if w.server != server)


def agent_count(windows: Iterable[WindowPlace]) -> int:
    return sum(len(w.agents) for w in windows)
