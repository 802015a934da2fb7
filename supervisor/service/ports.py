"""The narrow ports the service layer's parts are given, instead of the loop object.

Each part of `service/` receives only the ports it uses — typed here as small `Protocol`s —
so its unit tests pass in-memory fakes (a recording tmux, a fake clock and scheduler) and run
in milliseconds, while `pitcrew watch` and the tray app pass the real adapters. Nothing here
runs anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.core.records import Decision

Post = Callable[[object], None]        # put an event on the loop's queue (any thread)
Persist = Callable[[], bool | None]    # write state.json now; False: it could not be
Changed = Callable[[], None]           # something a UI shows changed


class Clock(Protocol):
    """Wall time (epoch seconds) for decisions and the ledger; monotonic for throttles."""

    def wall(self) -> float: ...
    def mono(self) -> float: ...


class Scheduler(Protocol):
    """Post `event` to the loop at wall time `at`; a job with the same `key` is replaced."""

    def at(self, when: float, event: object, key: str | None = None) -> None: ...


class TmuxReads(Protocol):
    @property
    def label(self) -> str: ...
    def list_panes(self, reap: bool = True) -> list[PaneInfo]: ...
    def pane(self, pane_id: str) -> PaneInfo | None: ...
    def capture(self, pane_id: str, history: int = 0) -> str | None: ...
    def snapshot(self, pane_id: str) -> tuple[PaneInfo, str] | None: ...


class TmuxPort(TmuxReads, Protocol):
    """What the service layer asks of tmux (adapters/tmux.py's `Tmux` is the real one)."""

    def send_text(self, pane_id: str, text: str) -> None: ...
    def send_keys(self, pane_id: str, *keys: str) -> None: ...
    def remains_on_exit(self, pane_id: str) -> bool | None: ...
    def set_remain_on_exit(self, pane_id: str, on: bool = True) -> None: ...
    def respawn(self, pane_id: str, argv: Sequence[str], cwd: str | None = None,
                env: Mapping[str, str] | None = None, kill: bool = False) -> None: ...
    def new_window(self, session: str, argv: Sequence[str], cwd: str, name: str | None = None,
                   env: dict[str, str] | None = None) -> str: ...
    def kill_pane(self, pane_id: str) -> None: ...


class LedgerPort(Protocol):
    def append(self, decision: Decision) -> None: ...


class NotifyPort(Protocol):
    """The one notification gate (dedupe, snooze) in front of the desktop."""

    def offer(self, msg: Message) -> bool: ...
