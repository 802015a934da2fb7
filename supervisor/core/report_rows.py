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


TEXT_FIELDS = ("kind", "badge", "agent", "prompt", "project", "trigger", "reason")
LATEST = 253_402_300_800.0       # the end of the year 9999: a time a calendar can show


def parse_row(data: object) -> Row | None:
    """A ledger row, or None when it lacks a time or a terminal (a torn or foreign line) or a
    field has the wrong shape (a text that is not text, readings that are not a table, a time
    no calendar shows): such a row is skipped, and counted, rather than shown half-read."""
    if not isinstance(data, Mapping):
        return None
    at, terminal = data.get("at"), data.get("terminal")
    if not isinstance(at, (int, float)) or isinstance(at, bool) or not isinstance(terminal, str):
        return None
    if not 0 <= at < LATEST:       # NaN fails this too
        return None
    if any(data.get(f) is not None and not isinstance(data.get(f), str) for f in TEXT_FIELDS):
        return None
    attempt = data.get("attempt")
    readings = data.get("readings")
    if (attempt is not None and (not isinstance(attempt, int) or isinstance(attempt, bool))) \
            or (readings is not None and not isinstance(readings, Mapping)):
        return None
    kind = text(data.get("kind")) or "decision"
    return Row(float(at), terminal, text(data.get("badge")) or kind, kind,
               text(data.get("agent")), text(data.get("prompt")), text(data.get("project")),
               text(data.get("trigger")), text(data.get("reason")),
               attempt if isinstance(attempt, int) else 0,
               dict(readings) if isinstance(readings, Mapping) else {})


def text(value: object) -> str:
    return value if isinstance(value, str) else ""


# -- showing ledger text on a terminal ------------------------------------------------------
# Ledger text comes from agents' screens and prompts: raw on a terminal, an escape sequence in
# it would act (OSC 52 writes the clipboard, BEL rings, a CSI moves the cursor or recolours),
# and a bidi override reorders what is shown. Such characters are shown as their escape text.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _unsafe(c: str) -> bool:
    o = ord(c)
    return o < 0x20 or 0x7F <= o <= 0x9F or c in _BIDI or 0xD800 <= o <= 0xDFFF


def _escaped(c: str) -> str:
    o = ord(c)
    return _NAMED.get(c) or (f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}")


def printable(value: object) -> str:
    """`value` as text safe to print on a terminal: control characters (C0, DEL, C1), bidi
    controls and lone surrogates as their escape text (`\\x1b`, `\\x07`, `\\u202e`)."""
    s = value if isinstance(value, str) else str(value)
    if s.isprintable() and s.isascii():
        return s
    return "".join(_escaped(c) if _unsafe(c) else c for c in s)


def printable_json(text: str) -> str:
    """JSON text (from `json.dumps(…, ensure_ascii=False)`) safe to print on a terminal: the
    characters JSON leaves raw that a terminal acts on (DEL, C1, bidi controls, lone
    surrogates) as `\\uXXXX` escapes — still the same JSON. They only occur inside strings."""
    if text.isascii() and "\x7f" not in text:
        return text
    return "".join(f"\\u{ord(c):04x}" if ord(c) >= 0x20 and _unsafe(c) else c for c in text)


def plural(n: int, word: str) -> str:
    """`1 incident`, `2 incidents`, `1 anomaly`, `0 anomalies`."""
    if n == 1:
        return f"1 {word}"
    return f"{n:,} " + (word[:-1] + "ies" if word.endswith("y") else word + "s")
