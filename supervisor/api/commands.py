"""What a UI or the CLI may ask the supervisor to do: frozen command records.

The tray app hands these to the supervisor's queue; the CLI (and a tray app that is not the
supervising process) appends their `to_record()` to the command spool, which the supervisor
reads back with `parse`. One set of records, so a click and a command line cannot drift
apart. `parse` is the boundary: a record that is not one of these is `None` (and logged by
the caller), never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

AUTOPILOT_ACTIONS = ("on", "off", "pause", "resume")


@dataclass(frozen=True, slots=True)
class SetSetting:
    """Write one config.toml value (comments kept) and apply it."""

    section: str
    key: str
    value: Any

    def to_record(self) -> dict[str, Any]:
        return {"set": {"section": self.section, "key": self.key, "value": self.value}}


@dataclass(frozen=True, slots=True)
class SetAutopilot:
    """`on` | `off` | `pause` | `resume`, exactly as `pitcrew autopilot …`: On also grants the
    screen-read consent, Off also clears a pause."""

    action: str

    def to_record(self) -> dict[str, Any]:
        return {"autopilot_mode": self.action}


@dataclass(frozen=True, slots=True)
class ChangeState:
    """The state.json part of a change (pause, consent), which the CLI applies itself when no
    supervisor runs. None leaves a field as it is."""

    paused: bool | None = None
    consent: bool | None = None

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {}
        if self.paused is not None:
            record["autopilot"] = "pause" if self.paused else "resume"
        if self.consent is not None:
            record["consent"] = "grant" if self.consent else "revoke"
        return record


@dataclass(frozen=True, slots=True)
class ConsentAsked:
    """The consent dialog was shown once (whatever the answer): never ask again by itself."""

    def to_record(self) -> dict[str, Any]:
        return {"consent_asked": True}


@dataclass(frozen=True, slots=True)
class ResumeNow:
    """Act on a waiting incident now (a notification's *Resume now*)."""

    terminal: str

    def to_record(self) -> dict[str, Any]:
        return {"resume_now": self.terminal}


@dataclass(frozen=True, slots=True)
class Rerun:
    """Start the terminal's agent in a fresh session and send its task's prompt again."""

    terminal: str

    def to_record(self) -> dict[str, Any]:
        return {"rerun": self.terminal}


@dataclass(frozen=True, slots=True)
class Send:
    """Queue a message for a terminal; `id` makes the same request idempotent."""

    terminal: str
    text: str
    id: str | None = None
    wait: bool = False     # keep it for a terminal that is not there yet

    def to_record(self) -> dict[str, Any]:
        send = {"terminal": self.terminal, "text": self.text, "id": self.id}
        return {"send": {**send, "wait": True} if self.wait else send}


@dataclass(frozen=True, slots=True)
class Bind:
    """Put a terminal in a seat."""

    seat: str
    terminal: str

    def to_record(self) -> dict[str, Any]:
        return {"bind": {"seat": self.seat, "terminal": self.terminal}}


Command = (SetSetting | SetAutopilot | ChangeState | ConsentAsked | ResumeNow | Rerun | Send
           | Bind)


def consent(grant: bool) -> ChangeState:
    return ChangeState(consent=grant)


def turn_autopilot_on(consented: bool) -> tuple[Command, ...]:
    """What a UI sends once the user asked for Autopilot on and (if the view needed it) the
    consent dialog answered: the dialog was shown, consent if given, then On — but never On
    without consent from a dialog the user declined."""
    if not consented:
        return (ConsentAsked(),)
    return (ConsentAsked(), consent(True), SetAutopilot("on"))


def parse(record: Mapping[str, Any]) -> Command | None:
    """The command a spooled record holds, or None when it holds none."""
    if isinstance(send := record.get("send"), Mapping):
        raw_id = send.get("id")
        return Send(str(send.get("terminal", "")), str(send.get("text", "")),
                    str(raw_id) if raw_id else None, send.get("wait") is True)
    if isinstance(bind := record.get("bind"), Mapping):
        return Bind(str(bind.get("seat", "")), str(bind.get("terminal", "")))
    if isinstance(change := record.get("set"), Mapping):
        return SetSetting(str(change.get("section")), str(change.get("key")),
                          change.get("value"))
    if isinstance(terminal := record.get("resume_now"), str):
        return ResumeNow(terminal)
    if isinstance(terminal := record.get("rerun"), str):
        return Rerun(terminal)
    if record.get("consent_asked") is True:
        return ConsentAsked()
    if record.get("autopilot_mode") in AUTOPILOT_ACTIONS:
        return SetAutopilot(str(record["autopilot_mode"]))
    paused = {"pause": True, "resume": False}.get(str(record.get("autopilot")))
    granted = {"grant": True, "revoke": False}.get(str(record.get("consent")))
    if paused is not None or granted is not None:
        return ChangeState(paused, granted)
    return None
