"""A ledger row as the incident report reads it: leniently, from the raw JSON object.

A row needs only a time and a terminal. A kind or badge this version does not know (a newer
Pitcrew, or another feature, wrote it) is kept as it is — the report shows it, it only does
not move the timeline — so adding a row kind never breaks an older report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Row:
    """One ledger row as the report reads it."""

    at: float
    terminal: str
    badge: str
    kind: str = "decision"
    agent: str = ""
    prompt: str = ""
    project: str = ""
    trigger: str = ""
    reason: str = ""
    attempt: int = 0
    readings: Mapping[str, object] = field(default_factory=dict)

    @property
    def incident(self) -> int | None:
        n = self.readings.get("incident")
        return n if isinstance(n, int) and not isinstance(n, bool) else None

    def to_json(self) -> dict[str, object]:
        return {"at": self.at, "terminal": self.terminal, "kind": self.kind,
                "badge": self.badge, "agent": self.agent, "prompt": self.prompt,
                "project": self.project, "trigger": self.trigger, "reason": self.reason,
                "attempt": self.attempt, "readings": dict(self.readings)}


def parse_row(data: object) -> Row | None:
    """A ledger row, or None when it lacks a time or a terminal (a torn or foreign line)."""
    if not isinstance(data, Mapping):
        return None
    at, terminal = data.get("at"), data.get("terminal")
    if not isinstance(at, (int, float)) or isinstance(at, bool) or not isinstance(terminal, str):
        return None
    kind = text(data.get("kind")) or "decision"
    attempt = data.get("attempt")
    readings = data.get("readings")
    return Row(float(at), terminal, text(data.get("badge")) or kind, kind,
               text(data.get("agent")), text(data.get("prompt")), text(data.get("project")),
               text(data.get("trigger")), text(data.get("reason")),
               attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else 0,
               dict(readings) if isinstance(readings, Mapping) else {})


def text(value: object) -> str:
    return value if isinstance(value, str) else ""
