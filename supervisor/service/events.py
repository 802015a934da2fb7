"""Everything that reaches the loop's queue, as typed records.

The adapters' own events (`Output`, `Topology`, `Activity`, `Attached`, `ControlGone` from the
control-mode client, `ProcessGone` from the exit watcher) are re-exported here, so the loop
matches on one module.
"""

from __future__ import annotations

from dataclasses import dataclass

from pitcrew.supervisor.adapters.checker_cli import Diagnosis
from pitcrew.supervisor.adapters.control import (
    Activity,
    Attached,
    ControlGone,
    Output,
    Topology,
)
from pitcrew.supervisor.adapters.exits import ProcessGone
from pitcrew.supervisor.api.commands import Command
from pitcrew.supervisor.core.records import Observation

__all__ = [
    "Activity", "Attached", "CommandArrived", "ControlGone", "DeliveryDue", "DiagnosisDone",
    "Output", "PressEnter", "ProcessGone", "Report", "Rescan", "Stop", "Topology", "Wakeup",
]


@dataclass(frozen=True, slots=True)
class Wakeup:
    """A wait the core asked for is over (`Wake` action)."""

    key: str


@dataclass(frozen=True, slots=True)
class Rescan:
    """Look at the panes again: all of them, or one that just changed."""

    pane_id: str | None = None


@dataclass(frozen=True, slots=True)
class Stop:
    pass


@dataclass(frozen=True, slots=True)
class DeliveryDue:
    delivery_id: str


@dataclass(frozen=True, slots=True)
class PressEnter:
    """The second half of typing a line: Enter, a moment after the text (scheduled, so the
    loop never sleeps). `pane_id` and `text` say what was typed, to check it is still ours."""

    key: str
    pane_id: str
    what: str        # "resume" | "message" | "continue" | … (for the log)


@dataclass(frozen=True, slots=True)
class Report:
    """An observation about terminal `key` for the core, from a part that is not the loop."""

    key: str
    observation: Observation


@dataclass(frozen=True, slots=True)
class CommandArrived:
    command: Command


@dataclass(frozen=True, slots=True)
class DiagnosisDone:
    """A diagnosis (run off the loop's thread) has its verdict."""

    key: str
    origin: str                 # "delivery" | "quiet" | "loop"
    diagnosis: Diagnosis
    failures: int = 0
    quiet_for: float = 0.0
    note: str = ""              # a loop: what the agent keeps repeating
