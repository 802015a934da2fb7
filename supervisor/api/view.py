"""What a UI may know about the supervisor: one immutable snapshot, and the commands back.

The tray app renders only `View`s (built on the supervisor's thread, handed over through a
queued Qt signal) and changes things only by posting `command` records; it never touches
tmux, psutil, files or a checker itself. The same records are what `pitcrew autopilot …`,
`pitcrew send …` and friends append to the command spool, so the CLI and the UI cannot
drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pitcrew.supervisor.core.records import Badge, Decision

# The badges the Autopilot card shows (SPEC §4); Scheduled/Skipped/Diagnosed stay in the ledger.
CARD_BADGES = frozenset({Badge.RESUMED, Badge.SWITCHED, Badge.COULDNT_RESUME, Badge.CONTINUED,
                         Badge.STOPPED, Badge.WAITING})
RECENT = 5
TIMELINE_SECONDS = 6 * 3600.0   # how far back a terminal's timeline goes
# How a UI groups `TerminalView.state`s: the agent waits on a person, or is stuck.
WAITING_STATES = frozenset({"rate_limit", "login_required", "upgrade_prompt", "question",
                            "picker", "draft", "continue_prompt"})
STUCK_STATES = frozenset({"connection_lost", "crashed"})


@dataclass(frozen=True, slots=True)
class TerminalView:
    key: str                      # "<server>:<pane id>", what commands name
    target: str                   # "work:1.0", what a user recognises
    provider: str                 # provider name ("claude")
    agent: str                    # display name ("Claude Code")
    project: str                  # working directory
    state: str                    # a ScreenState value, or "exited"
    session_id: str | None
    last_activity: float | None   # epoch seconds of the last output
    timeline: tuple[tuple[float, str], ...]   # (since, state), oldest first, last 6 hours
    task: str | None = None       # the running prompt
    seat: str | None = None
    note: str = ""                # what Autopilot is doing about it, if anything


@dataclass(frozen=True, slots=True)
class DecisionView:
    at: float
    badge: str                    # a Badge value
    prompt: str
    project: str
    reason: str
    terminal: str
    agent: str

    @classmethod
    def of(cls, d: Decision) -> DecisionView:
        return cls(d.at, d.badge.value, d.prompt, d.project, d.reason, d.terminal, d.agent)


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


def recent_decisions(rows: Sequence[Decision], n: int = RECENT) -> tuple[DecisionView, ...]:
    """The card's rows: the newest `n` decisions with a card badge, newest first."""
    return tuple(DecisionView.of(d) for d in rows if d.badge in CARD_BADGES)[:n]


# -- commands: plain records, the same the command spool carries ---------------------------

def set_setting(section: str, key: str, value: Any) -> dict[str, Any]:
    """Write one config.toml value (comments kept) and apply it."""
    return {"set": {"section": section, "key": key, "value": value}}


def autopilot(action: str) -> dict[str, Any]:
    """`on` | `off` | `pause` | `resume`, exactly as `pitcrew autopilot …`."""
    return {"autopilot_mode": action}


def consent(grant: bool) -> dict[str, Any]:
    return {"consent": "grant" if grant else "revoke"}


def consent_asked() -> dict[str, Any]:
    return {"consent_asked": True}


def resume_now(terminal: str) -> dict[str, Any]:
    """Act on a waiting incident now (a notification's *Resume now*)."""
    return {"resume_now": terminal}


def send(terminal: str, text: str, delivery_id: str | None = None) -> dict[str, Any]:
    return {"send": {"terminal": terminal, "text": text, "id": delivery_id}}
