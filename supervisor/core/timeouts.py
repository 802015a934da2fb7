"""Task timeouts, as a table (seed 003: soft 20 min, idle 10 min, hard 30 min; seed 002: a
message not started within 5 min, a run longer than 2.5 h).

Four clocks run per terminal, each against its own limit, and each limit may be off (None):

* idle — the running task made no *progress* for that long (see `progress_text`): diagnose,
  as for a quiet task (`[autopilot] quiet_after` is this setting's old name). In Manual timer
  mode no checker can tell a stalled stream from a long step, so there idle counts from the
  last change of *any* kind (a frozen spinner is stuck; a live one is not), and a screen on
  which only spinners and timers move is a stalled stream after the longer `stalled` limit
  (`TIMER_RULES`);
* soft — the task has run that long: notify (and, if asked, type the fixed wrap-up message);
* hard — the task has run that long: Autopilot stops acting for that terminal and notifies;
* not_started — a message delivered to the agent never made it busy: a failed delivery.

`due` says which limits a terminal just passed; it reads no clock (the caller passes `now`
and the times the clocks started) and fires each limit once per clock start (`fired`).
Progress is not "any output": real CLIs animate a spinner, an elapsed-time counter or a
token counter while their stream is dead, so each provider declares regexes
(`screen.progress_ignore`) for the parts of its screen that move without meaning anything;
`progress_text` removes them, and only a change in what is left is progress.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace

WRAP_UP_MESSAGE = "Finish the current step and save your work; you will be stopped soon."


class Timeout(enum.StrEnum):
    IDLE = "idle"
    SOFT = "soft"
    HARD = "hard"
    NOT_STARTED = "not_started"
    STALLED = "stalled"


class Clock(enum.StrEnum):
    """Which moment a timeout counts from."""

    RUNNING = "running"      # the task started (a user prompt)
    PROGRESS = "progress"    # the screen last changed outside its spinner/status parts
    OUTPUT = "output"        # the pane last printed anything (a spinner frame too)
    DELIVERED = "delivered"  # a message was delivered and the agent has not got busy since


# The table: each timeout, the clock it counts from. Checked in this order (hard first: a
# task past its hard limit needs no soft notice in the same breath).
RULES: tuple[tuple[Timeout, Clock], ...] = (
    (Timeout.HARD, Clock.RUNNING),
    (Timeout.SOFT, Clock.RUNNING),
    (Timeout.IDLE, Clock.PROGRESS),
    (Timeout.NOT_STARTED, Clock.DELIVERED),
)
# Manual timer mode: idle is a frozen screen; only spinners moving for `stalled` is a stall.
TIMER_RULES: tuple[tuple[Timeout, Clock], ...] = (
    (Timeout.HARD, Clock.RUNNING),
    (Timeout.SOFT, Clock.RUNNING),
    (Timeout.IDLE, Clock.OUTPUT),
    (Timeout.STALLED, Clock.PROGRESS),
    (Timeout.NOT_STARTED, Clock.DELIVERED),
)


def rules(timer_mode: bool) -> tuple[tuple[Timeout, Clock], ...]:
    return TIMER_RULES if timer_mode else RULES


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds per limit; None is off. Defaults: idle keeps `quiet_after`'s 180 s, soft and
    not-started are the seeds' 20 min and 5 min, hard is seed 002's 2.5 h (seed 003's 30 min
    would hold every ordinary long task; set `hard = 1800` for it)."""

    idle: float | None = 180.0
    soft: float | None = 1200.0
    hard: float | None = 9000.0
    not_started: float | None = 300.0
    stalled: float | None = 900.0  # Manual timer only: spinners alone moved this long
    wrap_up: bool = False          # at the soft limit, also type WRAP_UP_MESSAGE

    def limit(self, kind: Timeout) -> float | None:
        value: float | None = getattr(self, kind.value)
        return value

    def scaled(self, factor: float) -> Timeouts:
        """Every limit times `factor` (the test-only time scale)."""
        def times(v: float | None) -> float | None:
            return None if v is None else v * factor
        return replace(self, idle=times(self.idle), soft=times(self.soft),
                       hard=times(self.hard), not_started=times(self.not_started),
                       stalled=times(self.stalled))


DEFAULT_TIMEOUTS = Timeouts()
Overrides = tuple[tuple[str, float | bool | None], ...]   # hashable, for frozen settings
KEYS = frozenset(f.name for f in fields(Timeouts))


def resolve(base: Timeouts, *overrides: Mapping[str, float | bool | None] | Overrides
            ) -> Timeouts:
    """`base` with each override applied in order (global < provider < seat); a later one
    wins key by key. 0 or False turns a limit off."""
    out = base
    for over in overrides:
        changes: dict[str, object] = {}
        pairs = over.items() if isinstance(over, Mapping) else over
        for key, value in pairs:
            if key == "wrap_up":
                changes[key] = bool(value)
            elif key in KEYS:
                changes[key] = None if value in (None, False, 0) else float(value)
        out = replace(out, **changes)   # type: ignore[arg-type]
    return out


def due(limits: Timeouts, now: float, started: Mapping[Clock, float | None],
        fired: Iterable[Timeout] = (), table: tuple[tuple[Timeout, Clock], ...] = RULES
        ) -> tuple[Timeout, ...]:
    """The timeouts whose clock started at least their limit ago and that have not fired
    since it started. A clock that is not running (None) fires nothing."""
    done = frozenset(fired)
    out: list[Timeout] = []
    for kind, clock in table:
        limit = limits.limit(kind)
        since = started.get(clock)
        if limit is None or since is None or kind in done:
            continue
        if now - since >= limit:
            out.append(kind)
    return tuple(out)


def duration(seconds: float) -> str:
    """20 min, 2.5 h, 45 s — for notifications and ledger rows."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def progress_text(text: str, ignore: Iterable[re.Pattern[str]]) -> str:
    """The screen with every `ignore` match removed from each line, blank lines dropped:
    two readings that differ only in spinners, timers and counters give the same text."""
    patterns = tuple(ignore)
    lines: list[str] = []
    for line in text.split("\n"):
        for rx in patterns:
            line = rx.sub("", line)
        if line := line.strip():
            lines.append(line)
    return "\n".join(lines)


MAX_SECONDS = 7 * 86400.0


def parse_overrides(raw: object) -> tuple[Overrides, list[str]]:
    """A `{idle = 600, hard = false, wrap_up = true}` table from config.toml: the valid
    settings, and one problem per bad key (named, with what was expected)."""
    if not isinstance(raw, dict):
        return (), [f"expected a table like {{soft = 1200, hard = false}}, got {raw!r}"]
    out: list[tuple[str, float | bool | None]] = []
    problems: list[str] = []
    for key, value in raw.items():
        if key == "wrap_up":
            if isinstance(value, bool):
                out.append((key, value))
            else:
                problems.append(f"{key}: expected true or false, got {value!r}")
        elif key in KEYS:
            if value is False or (value == 0 and not isinstance(value, bool)):
                out.append((key, None))
            elif isinstance(value, bool) or not isinstance(value, int | float) or not (
                    10 <= value <= MAX_SECONDS):
                problems.append(f"{key}: expected 10 to {MAX_SECONDS:.0f} seconds, or false "
                                f"(off), got {value!r}")
            else:
                out.append((key, float(value)))
        else:
            problems.append(f"{key}: unknown setting (one of {', '.join(sorted(KEYS))})")
    return tuple(out), problems
