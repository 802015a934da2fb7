"""What `classifier.explain` records while it reads a screen: the rules that fired on which
lines, and the steps it took (kept apart so the classifier and its steps share it without
importing each other)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Fired:
    """One rule that matched one screen line (`row`: 1-based, counted from the top)."""

    row: int
    state: str
    pattern: str
    text: str
    note: str = ""     # why it did not count, when it did not


@dataclass
class Trace:
    fired: list[Fired] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    decided: int | None = None   # the row (1-based) whose reading decided the state, if any
