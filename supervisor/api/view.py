"""What a UI may know about the supervisor: one immutable snapshot.

The tray app renders only `View`s (built on the supervisor's thread by `api.build`, handed
over through a queued Qt signal) and changes things only by sending `api.commands`; it never
touches tmux, psutil, files or a checker itself. Everything a UI would otherwise have to
decide — the tray's colour, whether turning Autopilot on needs the consent dialog first, the
numbers in its texts — is computed here, so `desktop/` holds no rule of its own.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pitcrew.supervisor.core.attention import rank
from pitcrew.supervisor.core.records import Badge, Decision

# The badges the Autopilot card shows (SPEC §4); Scheduled/Skipped/Diagnosed stay in the ledger.
CARD_BADGES = frozenset({Badge.RESUMED, Badge.SWITCHED, Badge.COULDNT_RESUME, Badge.CONTINUED,
                         Badge.STOPPED, Badge.WAITING, Badge.RERUN, Badge.TIMED_OUT,
                         Badge.LOOPING})
RECENT = 5
TIMELINE_SECONDS = 6 * 3600.0   # how far back a terminal's timeline goes
# How a UI groups `TerminalView.state`s: the agent waits on a person, or is stuck.
WAITING_STATES = frozenset({"rate_limit", "login_required", "upgrade_prompt", "question",
                            "picker", "draft", "continue_prompt"})
STUCK_STATES = frozenset({"connection_lost", "crashed", "looping"})   # looping: core.loops
# Who acted, as an Activity card marks it. Typed rows carry the delivery's kind as trigger:
# a "message" is the user's own (`pitcrew send`, the dashboard), a "rerun" re-sends the
# prompt of a rerun the user asked for; a "brief" is typed by a failover.
BY_YOU = "You"
BY_AUTOPILOT = "Autopilot"
BY_DIAGNOSIS = "AI Diagnosis"
USER_TRIGGERS = frozenset({"message", "rerun", "rerun (you asked)"})


# The dashboard's groups, in order: (attention, heading); core.attention.ORDER.
GROUPS: tuple[tuple[str, str], ...] = (("needs_you", "Needs you"), ("working", "Working"),
                                       ("done", "Done"), ("idle", "Idle"),
                                       ("stopped", "Stopped"))


class Alarm(enum.StrEnum):
    OK = "ok"
    WAITING = "attention"   # waiting on you
    STUCK = "stuck"         # an agent is stuck or gone


class TrayStatus(enum.StrEnum):
    """The tray's one-glance status, worst first."""

    STUCK = "stuck"
    ATTENTION = "attention"
    PAUSED = "paused"
    OK = "ok"


@dataclass(frozen=True, slots=True)
class Limits:
    """Autopilot's numbers as a UI shows them (from the one `RestartPolicy`)."""

    max_attempts: int = 3
    hourly_cap: int = 6
    backoff: tuple[float, ...] = (5.0, 20.0, 60.0)


@dataclass(frozen=True, slots=True)
class TerminalView:
    key: str                      # "<server>:<pane id>", what commands name
    target: str                   # "work:1.0", what a user recognises
    provider: str                 # provider name ("claude")
    agent: str                    # display name ("Claude Code")
    project: str                  # working directory
    state: str                    # a ScreenState value, "exited", or "looping"
    session_id: str | None
    last_activity: float | None   # epoch seconds of the last output
    timeline: tuple[tuple[float, str], ...]   # (since, state), oldest first, last 6 hours
    task: str | None = None       # the running prompt
    seat: str | None = None
    note: str = ""                # what Autopilot is doing about it, if anything
    waiting_on_you: bool = False  # Autopilot holds its incident for a person
    host: str = "local"           # the machine it runs on ("gpu1" for a remote host)
    tokens: str = ""              # "1.6M tokens · $0.42" when its CLI records usage
    attention: str = "idle"       # core.attention: needs_you|working|done|idle|stopped
    since: float | None = None    # epoch seconds it entered that attention
    why: str = ""                 # "screen: asks a question — Allow …" (the evidence first)
    waiting: str = ""             # how long it has been so ("4 min"), at the view's `at`

    @property
    def alarm(self) -> Alarm:
        if self.state in STUCK_STATES or self.state == "exited":
            return Alarm.STUCK
        if self.state in WAITING_STATES or self.waiting_on_you:
            return Alarm.WAITING
        return Alarm.OK


@dataclass(frozen=True, slots=True)
class DecisionView:
    at: float
    badge: str                    # a Badge value
    prompt: str
    project: str
    reason: str
    terminal: str
    agent: str
    by: str = BY_AUTOPILOT        # who acted: BY_YOU, BY_AUTOPILOT or BY_DIAGNOSIS

    @classmethod
    def of(cls, d: Decision) -> DecisionView:
        return cls(d.at, d.badge.value, d.prompt, d.project, d.reason, d.terminal, d.agent,
                   decided_by(d))


def decided_by(d: Decision) -> str:
    """Who a ledger row's action belongs to: the user's own messages and reruns are theirs,
    a checker's reading is AI Diagnosis's, every other row is Autopilot's."""
    if d.badge in (Badge.TYPED, Badge.RERUN) and d.trigger in USER_TRIGGERS:
        return BY_YOU
    return BY_DIAGNOSIS if d.badge is Badge.DIAGNOSED else BY_AUTOPILOT


@dataclass(frozen=True, slots=True)
class CheckerView:
    provider: str
    model: str | None             # None: the CLI's default model
    installed: bool
    display_name: str = ""

    def label(self) -> str:
        return f"{self.provider}:{self.model}" if self.model else self.provider


@dataclass(frozen=True, slots=True)
class SettingsView:
    autopilot: bool = False
    ask_to_continue: bool = True
    diagnosis: bool = True
    diagnosis_mode: str = "ai"                    # "ai" | "timer"
    checkers: tuple[CheckerView, ...] = ()        # the user's chosen list, in order


@dataclass(frozen=True, slots=True)
class HostView:
    """A remote host's connection, as the dashboard shows it."""

    name: str
    state: str                    # "connecting" | "up" | "down"
    problem: str = ""             # why it is down, one line


@dataclass(frozen=True, slots=True)
class View:
    server: str = ""
    mode: str = "off"                             # "on" | "paused" | "off"
    off_for_launch: bool = False                  # PITCREW_AUTOPILOT=off
    status_line: str = "Off."
    consent: bool = False
    consent_asked: bool = False                   # the consent dialog was shown once
    terminals: tuple[TerminalView, ...] = ()
    decisions: tuple[DecisionView, ...] = ()      # newest first: the card's 5
    activity: tuple[DecisionView, ...] = ()       # newest first: every kind, for activity cards
    settings: SettingsView = SettingsView()
    candidates: tuple[CheckerView, ...] = ()      # the 8 checker CLIs, installed or not
    models: Mapping[str, Sequence[str]] | None = None   # known models per checker provider
    problems: tuple[str, ...] = ()                # one-line config/provider problems
    at: float = 0.0
    limits: Limits = Limits()
    hosts: tuple[HostView, ...] = ()              # remote hosts (none: only this machine)
    relay: str = ""               # the other supervisor this app shows and relays to, if any

    @property
    def tray_status(self) -> TrayStatus:
        alarms = {t.alarm for t in self.terminals}
        if Alarm.STUCK in alarms:
            return TrayStatus.STUCK
        if Alarm.WAITING in alarms or self.needs_you:
            return TrayStatus.ATTENTION
        if self.mode == "paused":
            return TrayStatus.PAUSED
        return TrayStatus.OK

    @property
    def by_attention(self) -> tuple[TerminalView, ...]:
        """The terminals as every list shows them: needs you first (the oldest need first),
        then working, done, idle, stopped."""
        return tuple(sorted(self.terminals, key=lambda t: rank(t.attention, t.since)))

    @property
    def needs_you(self) -> tuple[TerminalView, ...]:
        return tuple(t for t in self.by_attention if t.attention == "needs_you")

    def grouped(self) -> tuple[tuple[str, tuple[TerminalView, ...]], ...]:
        """(heading, rows) for each group that has rows, in GROUPS order."""
        rows = self.by_attention
        return tuple((heading, group) for name, heading in GROUPS
                     if (group := tuple(t for t in rows if t.attention == name)))

    @property
    def autopilot_needs_consent(self) -> bool:
        """Turning Autopilot on from a UI shows the consent dialog first (SPEC §3, §4)."""
        return not self.consent

    @property
    def offer_consent(self) -> bool:
        """Ask once, unprompted, before any screen text could leave: With AI is the default."""
        return (not self.consent and not self.consent_asked and self.settings.diagnosis
                and self.settings.diagnosis_mode == "ai" and bool(self.terminals))


def recent_decisions(rows: Sequence[Decision], n: int = RECENT) -> tuple[DecisionView, ...]:
    """The card's rows: the newest `n` decisions with a card badge, newest first."""
    return tuple(DecisionView.of(d) for d in rows if d.badge in CARD_BADGES)[:n]
