"""What must survive a restart of Pitcrew, gathered from the parts that own it (state.json).

Each part that keeps something on disk registers a function returning its JSON (`parts`);
`save` builds one snapshot from them and the terminals' core states and writes it
atomically. Terminals not seen since the start keep their last known state, so an incident
of a pane that has not come back yet is never lost by a save.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pitcrew.supervisor.api.commands import ChangeState
from pitcrew.supervisor.core.records import TerminalState
from pitcrew.supervisor.store import state_store
from pitcrew.supervisor.store.state_store import Snapshot

log = logging.getLogger("pitcrew")


class StateBook:
    def __init__(self, path: Path, snapshot: Snapshot,
                 states: Callable[[], Mapping[str, TerminalState]]) -> None:
        self.path = path
        self.snapshot = snapshot
        self.states = states
        self.parts: dict[str, Callable[[], Any]] = {}
        self._failed = False

    @property
    def paused(self) -> bool:
        return self.snapshot.paused

    @property
    def consent(self) -> bool:
        return self.snapshot.consent

    @property
    def consent_asked(self) -> bool:
        return bool(self.snapshot.extra.get("consent_asked"))

    def saved(self, key: str) -> TerminalState | None:
        """The state a terminal had when last saved (before this start, for a new pane)."""
        return self.snapshot.terminals.get(key)

    def extra(self, name: str) -> Any:
        return self.snapshot.extra.get(name)

    def change(self, paused: bool | None = None, consent: bool | None = None,
               consent_asked: bool | None = None) -> None:
        snap = self.snapshot
        extra = dict(snap.extra)
        if consent_asked is not None:
            extra["consent_asked"] = consent_asked
        self.snapshot = dataclasses.replace(
            snap, paused=snap.paused if paused is None else paused,
            consent=snap.consent if consent is None else consent, extra=extra)
        self.save()

    def forget(self, key: str) -> None:
        """A terminal that is gone for good (its incident closed with a ledger row)."""
        terminals = {k: v for k, v in self.snapshot.terminals.items() if k != key}
        self.snapshot = dataclasses.replace(self.snapshot, terminals=terminals)
        self.save()

    @property
    def failed(self) -> bool:
        """The last save failed (a full or read-only disk): nothing may act on what it holds."""
        return self._failed

    def save(self) -> bool:
        """Write state.json; False when it cannot be written. The first failure is said once
        (Pitcrew keeps watching, acts on nothing it cannot record); so is the recovery."""
        terminals = dict(self.states())
        for key, state in self.snapshot.terminals.items():
            terminals.setdefault(key, state)   # keep what is known about panes not seen now
        extra = {**self.snapshot.extra, **{name: part() for name, part in self.parts.items()}}
        self.snapshot = Snapshot(terminals, self.snapshot.paused, self.snapshot.consent, extra)
        try:
            state_store.save(self.path, self.snapshot)
        except OSError as exc:
            if not self._failed:
                log.error("cannot record to %s (%s): Pitcrew keeps watching but acts on "
                          "nothing until it can write there again", self.path,
                          exc.strerror or exc)
            self._failed = True
            return False
        if self._failed:
            log.warning("%s: can write again; catching up", self.path)
        self._failed = False
        return True


def apply_change(snap: Snapshot, change: ChangeState) -> Snapshot:
    """Pause/resume and consent: the state.json part of a command (also applied by the CLI
    itself when no supervisor runs)."""
    return Snapshot(snap.terminals, snap.paused if change.paused is None else change.paused,
                    snap.consent if change.consent is None else change.consent, snap.extra)
