"""Stuck-loop detection (seed 003: sliding-window analysis of what the agent does).

A step is one thing the agent did: a tool call with its arguments and whether it failed (from
its session transcript), or — for a CLI whose files hold no tool calls — a distinct screen
state with its evidence line. Two steps are the same when their `key`s are equal; the key
carries the call's full arguments, so an edit–test–fix cycle whose edits differ is not a
repeat, and a test that passes after failing ends any repetition (its key differs).

`detect` looks at the newest `window` steps and asks, for each period 1..`max_period`,
whether the newest `period` steps repeat back-to-back at least `min_cycles` times, ending at
the newest step: one call made again and again (period 1) or a cycle A→B→A→B (period 2…).
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
        if cycles >= rule.min_cycles:
            return Loop(period, cycles, tuple(tail[-period:]))
    return None


_NUMBERS = re.compile(r"\d+(?:[.,:]\d+)*")


def screen_step(state: str, evidence: str) -> Step:
    """A distinct screen state as a step: numbers (timers, attempt counts) do not make two
    readings of one state different."""
    evidence = " ".join(evidence.split())[:LABEL_CHARS]
    key = f"screen:{state}:{_NUMBERS.sub('#', evidence.lower())}"
    label = f"{state.replace('_', ' ')}" + (f": {evidence}" if evidence else "")
    return Step(key, label)


def add_screen_step(steps: tuple[Step, ...], step: Step, keep: int) -> tuple[Step, ...]:
    """Append a screen step unless it is the one before (only changes of state are steps)."""
    if steps and steps[-1].key == step.key:
        return steps
    return (*steps, step)[-keep:]
