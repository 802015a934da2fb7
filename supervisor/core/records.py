"""Records the Autopilot core reads and writes: observations in, actions and decisions out.

All are frozen. Times are epoch seconds (floats) passed in by the caller — never read here —
so a decision made before a restart of Pitcrew means the same after it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from pitcrew.supervisor.core.health import Health
from pitcrew.supervisor.core.screen import Classification

# -- observations --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PromptSubmitted:
    """A prompt reached the agent. Pitcrew's own follow-ups carry `by_pitcrew`."""

    text: str
    by_pitcrew: bool = False
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class TaskFinished:
    """The agent is idle again after working on a prompt."""

    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class ProcessExited:
    """The agent process of `generation` is gone. `status`/`signal` when tmux knows them
    (an agent started from a shell is not tmux's child: its status cannot be read).
    `interrupted`: the screen shows the `^C` a person typed to stop it."""

    generation: int
    status: int | None = None
    signal: int | None = None
    screen: Classification | None = None
    interrupted: bool = False
    tail: tuple[str, ...] = ()     # the last lines it left on screen (for the ledger only)


@dataclass(frozen=True, slots=True)
class ProcessStarted:
    """An agent process of `generation` is running (the relaunch took)."""

    generation: int
    pid: int


@dataclass(frozen=True, slots=True)
class ScreenSeen:
    """A fresh reading of the screen; `alive` says whether the agent process runs."""

    screen: Classification
    alive: bool = True


@dataclass(frozen=True, slots=True)
class WentQuiet:
    """A running task produced no output for `quiet_for` seconds; what the screen says now."""

    screen: Classification
    quiet_for: float
    confirmed_by: str = "local classifier"   # or the checker CLI that read the screen


@dataclass(frozen=True, slots=True)
class DeliveryStalled:
    """A message to the agent kept failing; the diagnosis of its screen."""

    screen: Classification
    failures: int
    confirmed_by: str = "local classifier"


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passed (a scheduled wake-up); carries a fresh reading when one was taken.
    `active`: the pane printed something since the incident opened (None: unknown)."""

    screen: Classification | None = None
    alive: bool | None = None
    active: bool | None = None


@dataclass(frozen=True, slots=True)
class Superseded:
    """Before acting on an earlier decision, the shell found a different agent there: the
    tmux server restarted, someone else now runs in the pane, the session changed, or the
    user restarted the agent by hand. The open incident is closed, never acted on."""

    reason: str


@dataclass(frozen=True, slots=True)
class RelaunchRefused:
    """The shell could not carry out a `Relaunch`: `busy` — the shell the agent ran in is
    running something else (never typed into); otherwise the pane or shell is gone."""

    reason: str
    busy: bool = False


@dataclass(frozen=True, slots=True)
class TimedOut:
    """A task timeout passed (`core.timeouts.Timeout` value): `after` seconds on its clock."""

    kind: str
    after: float
    screen: Classification | None = None


@dataclass(frozen=True, slots=True)
class LoopSeen:
    """The agent repeats itself (`core.loops`): `what` it repeats, in a person's words.
    `persists`: it still does after the first diagnosis. `screen`: the diagnosis' reading."""

    what: str
    persists: bool = False
    screen: Classification | None = None
    confirmed_by: str = "local classifier"


Observation = (
    PromptSubmitted | TaskFinished | ProcessExited | ProcessStarted | ScreenSeen | WentQuiet
    | DeliveryStalled | Tick | Superseded | RelaunchRefused | TimedOut | LoopSeen
)

# -- actions -------------------------------------------------------------------------------


class TextKind(enum.StrEnum):
    CONTINUE = "continue"                  # the fixed "continue where you stopped" message
    CONTINUE_IN_PLACE = "continue_in_place"  # the provider's declared message
    WRAP_UP = "wrap_up"                    # the fixed soft-timeout "finish and save" message


@dataclass(frozen=True, slots=True)
class TypeText:
    """Type `text` and press Enter. Only fixed or provider-declared texts ever get here."""

    text: str
    kind: TextKind


@dataclass(frozen=True, slots=True)
class Relaunch:
    """Start the agent again in its pane (killing a stuck one first) as `generation`."""

    argv: tuple[str, ...]
    generation: int
    kill_first: bool
    session_id: str | None


@dataclass(frozen=True, slots=True)
class SwitchToBackup:
    reason: str


@dataclass(frozen=True, slots=True)
class Wake:
    """Call `decide` with a `Tick` (and a fresh reading) at `at`."""

    at: float


@dataclass(frozen=True, slots=True)
class Notify:
    title: str
    body: str
    key: str            # de-duplication key for the notification gate


class Badge(enum.StrEnum):
    RESUMED = "Resumed"
    SWITCHED = "Switched to backup"
    COULDNT_RESUME = "Couldn't resume"
    CONTINUED = "Continued"
    STOPPED = "Stopped retrying"
    WAITING = "Waiting on you"
    SCHEDULED = "Scheduled"          # ours: a resume set for a limit's reset time
    SKIPPED = "Skipped"              # ours: looked, and rightly did nothing
    DIAGNOSED = "Diagnosed"          # ours: a checker (or the local classifier) read a screen
    TYPED = "Typed"                  # ours: a queued message was typed (never again: its id)
    TIMED_OUT = "Timed out"          # a task timeout passed (soft, hard, not started)
    LOOPING = "Looping"              # the agent keeps repeating the same steps
    RERUN = "Rerun"                  # ours: a fresh session, asked for by the user
    RESTORED = "Restored"            # ours: put back after a restart (`pitcrew restore`)


@dataclass(frozen=True, slots=True)
class Decision:
    """One ledger row: what Autopilot did or declined to do, with the readings behind it."""

    badge: Badge
    at: float
    terminal: str
    agent: str
    prompt: str
    project: str
    trigger: str
    reason: str
    attempt: int
    readings: Mapping[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "kind": "decision", "badge": self.badge.value, "at": self.at,
            "terminal": self.terminal, "agent": self.agent, "prompt": self.prompt,
            "project": self.project, "trigger": self.trigger, "reason": self.reason,
            "attempt": self.attempt, "readings": dict(self.readings),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Decision:
        if data.get("kind") != "decision":
            raise ValueError(f"not a decision row: kind={data.get('kind')!r}")
        readings = data.get("readings")
        return cls(
            badge=Badge(str(data["badge"])),
            at=float(data["at"]),  # type: ignore[arg-type]
            terminal=str(data["terminal"]), agent=str(data["agent"]),
            prompt=str(data["prompt"]), project=str(data["project"]),
            trigger=str(data["trigger"]), reason=str(data["reason"]),
            attempt=int(data["attempt"]),  # type: ignore[call-overload]
            readings=dict(readings) if isinstance(readings, Mapping) else {},
        )


@dataclass(frozen=True, slots=True)
class Record:
    decision: Decision


Action = TypeText | Relaunch | SwitchToBackup | Wake | Notify | Record

# -- what the core keeps per terminal ---------------------------------------------------------


class Phase(enum.StrEnum):
    WAITING = "waiting"          # a restart/continue is due at `next_at`
    CONFIRMING = "confirming"    # relaunched; waiting to see the new process keep running
    ASKING = "asking"            # resumed; the continue message goes when the agent is ready
    WATCHING = "watching"        # acted; watching the task go on
    HOLD = "hold"                # waiting on the user (a login, a question, the caps)
    STOPPED = "stopped"          # gave up on this incident


@dataclass(frozen=True, slots=True)
class Incident:
    """One failed task: owns the attempt count until the user sends a new prompt."""

    number: int
    prompt: str
    opened_at: float
    trigger: str
    reason: str
    attempts: int = 0
    phase: Phase = Phase.WAITING
    next_at: float | None = None
    hold: str | None = None        # rate_limit, server_error, login, paused, …
    renewals: int = 0              # rate-limit cooldown renewals
    started_pid: int | None = None  # the relaunched agent, seen running (confirming)
    reset_at: float | None = None   # the limit's reset, as read when its line appeared
    limit_line: str | None = None   # that line (the same line later is the same limit)


@dataclass(frozen=True, slots=True)
class TerminalState:
    terminal: str
    agent: str                     # display name ("Claude Code")
    project: str                   # working directory
    health: Health = Health.WORKING
    task: str | None = None        # the running prompt, if any
    session_id: str | None = None  # pinned when a task starts and when it ends
    incident: Incident | None = None
    incidents_opened: int = 0
    generation: int = 0            # bumped on each relaunch; older exits are ignored
    restarts: tuple[float, ...] = ()   # continues/resumes in the last hour
    crashes: tuple[float, ...] = ()    # failed exits in the crash-loop window
    server: str | None = None      # the tmux server's identity ("<pid>@<start time>")
    agent_started: float | None = None  # the agent process's start time (its identity)
    agent_pid: int | None = None        # and its pid: with the start time, the same process
