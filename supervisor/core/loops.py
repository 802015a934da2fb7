"""Stuck-loop detection (seed 003: sliding-window analysis of what the agent does).

A step is one thing the agent did: a tool call with its arguments and whether it failed (from
its session transcript), or a distinct screen state with its evidence line. Two steps are the
same when their `key`s are equal; the key carries the call's full arguments, so an
edit–test–fix cycle whose edits differ is not a repeat, and a test that passes after failing
ends any repetition (its key differs).

A loop is the same step *failing* again and again: `detect` looks at the newest `window`
steps and asks, for each period 1..`max_period`, whether the newest `period` steps repeat
back-to-back at least `min_cycles` times, ending at the newest step, with a failed step in
the cycle. One call made again and again (period 1) or a cycle A→B→A→B (period 2…). The same
call succeeding again and again (polling a background job, `sleep 5; tail build.log`) is
work, not a loop; a screen whose only change is a spinner frame is not a step at all; a CLI's
error line shown again (`API Error: 500 · retrying`) is a step that failed.
Pure: no clock, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LABEL_CHARS = 80


@dataclass(frozen=True, slots=True)
class Step:
    key: str                 # what makes two steps the same (tool, arguments, outcome)
    label: str               # what a person reads ("Bash: pytest -q (error)")
    error: bool = False


@dataclass(frozen=True, slots=True)
class LoopRule:
    window: int = 12         # the newest steps looked at
    min_cycles: int = 3      # repeats of the cycle needed …
    max_period: int = 4      # … for cycles of 1 to this many steps


DEFAULT_RULE = LoopRule()


@dataclass(frozen=True, slots=True)
class Loop:
    period: int
    cycles: int
    steps: tuple[Step, ...]  # one cycle, oldest first

    def describe(self) -> str:
        """'Bash: pytest -q (error) ×4' or 'Edit: a.py → Bash: pytest (error) ×3'."""
        return " → ".join(s.label for s in self.steps) + f" ×{self.cycles}"


def detect(steps: Sequence[Step], rule: LoopRule = DEFAULT_RULE) -> Loop | None:
    """The repetition ending at the newest step, if there is one (shortest period first)."""
    tail = list(steps)[-rule.window:]
    keys = [s.key for s in tail]
    for period in range(1, rule.max_period + 1):
        cycle = keys[-period:]
        if len(cycle) < period or (period > 1 and len(set(cycle)) == 1):
            continue   # a cycle of one repeated step is period 1's
        cycles = 1
        while len(keys) >= (cycles + 1) * period and \
                keys[len(keys) - (cycles + 1) * period: len(keys) - cycles * period] == cycle:
            cycles += 1
        if cycles >= rule.min_cycles and any(s.error for s in tail[-period:]):
            return Loop(period, cycles, tuple(tail[-period:]))
    return None


_NUMBERS = re.compile(r"\d+(?:[.,:]\d+)*")
# Glyphs that animate without meaning anything: braille and quarter-circle spinners, the
# star/dot spinners of Claude-like CLIs, bouncing bars; a screen that differs only in them
# (or in numbers: timers, counters) is the same screen.
_SPINNERS = re.compile(r"[\u2800-\u28ff◐◓◑◒◴◷◶◵◰◳◲◱⣾⣽⣻⢿⡿⣟⣯⣷·✢✳✶✻✽✺✹✸✷*|/\\⏳⌛●○◉◎▁▂▃▄▅▆▇█▉▊▋▌▍▎▏]")
_LEADING = re.compile(rf"^(?:{_SPINNERS.pattern}|\s)+")
# Screen states that are a step failing: the CLI's own error, shown again, is a failed step.
# (A crash is not: an exit is handled as an exit, and crash loops have their own rule.)
ERROR_STATES = frozenset({"connection_lost", "rate_limit", "login_required",
                          "continue_prompt"})


def still(text: str) -> str:
    """`text` without spinner glyphs, numbers and runs of blanks: what is left of a screen
    when its animation and its timers are taken away."""
    return " ".join(_SPINNERS.sub(" ", _NUMBERS.sub("#", text)).split())


def screen_step(state: str, evidence: str) -> Step:
    """A distinct screen state as a step: numbers (timers, attempt counts) and spinner frames
    do not make two readings of one state different. An error state is a failed step."""
    evidence = " ".join(evidence.split())[:LABEL_CHARS]
    key = f"screen:{state}:{still(evidence.lower())}"
    shown = _LEADING.sub("", evidence) or evidence
    label = f"{state.replace('_', ' ')}" + (f": {shown}" if shown else "")
    return Step(key, label, state in ERROR_STATES)


def add_screen_step(steps: tuple[Step, ...], step: Step, keep: int) -> tuple[Step, ...]:
    """Append a screen step unless it is the one before (only changes of state are steps)."""
    if steps and steps[-1].key == step.key:
        return steps
    return (*steps, step)[-keep:]


# The head of a CLI's own error line ("✖ API Error: 500 · retrying", "ERROR: overloaded",
# "Request failed with status 503"), looked for only in the last lines of a running screen.
_ERROR_LINE = re.compile(
    r"^[^\w\[]*(?:\[?API Error\b|Error:|ERROR\b|\[ERROR\]|Model call failed|Request failed)")
_ATTEMPT = re.compile(r"\battempt\s*(\d+)", re.I)
ERROR_TAIL = 6            # non-blank lines at the bottom of a screen where an error line counts


def error_line(text: str, tail: int = ERROR_TAIL) -> str | None:
    """The newest error line the CLI printed among the last `tail` non-blank lines."""
    lines = [line.strip() for line in text.splitlines() if line.strip()][-tail:]
    return next((line for line in reversed(lines) if _ERROR_LINE.match(line)), None)


def error_seen(text: str, line: str) -> tuple[str, str, int]:
    """What tells one showing of an error line from the next: its words (numbers and spinners
    aside), its attempt number, and how many lines of the screen say the same. A countdown
    ("retrying in 4s… 3s…") is one showing; a new attempt, or the line printed once more, is
    another."""
    key = still(line.lower())
    attempt = _ATTEMPT.search(line)
    count = sum(1 for other in text.splitlines() if still(other.strip().lower()) == key)
    return key, attempt.group(1) if attempt else "", count
