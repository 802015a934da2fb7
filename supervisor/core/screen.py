"""The vocabulary of screen states and the record a classification returns."""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass


class ScreenState(enum.StrEnum):
    BUSY = "busy"
    IDLE = "idle"
    RATE_LIMIT = "rate_limit"
    LOGIN_REQUIRED = "login_required"
    UPGRADE_PROMPT = "upgrade_prompt"
    QUESTION = "question"
    PICKER = "picker"
    DRAFT = "draft"
    CONNECTION_LOST = "connection_lost"
    CONTINUE_PROMPT = "continue_prompt"
    CRASHED = "crashed"
    EXITED = "exited"      # the agent is gone and nothing on screen says it failed
    UNKNOWN = "unknown"


# States that stop an agent until something happens; searched as "blocking" screens.
# Listed from most to least urgent: when one dialog block shows several, the first wins
# (a limit menu is a picker *about* a rate limit, so it is a rate limit).
# A crash report that names a limit or a login is that limit or login (a hold: never resume
# into it); one that names a network error is still a crash (the process is gone).
BLOCKING_PRIORITY: tuple[ScreenState, ...] = (
    ScreenState.LOGIN_REQUIRED,
    ScreenState.RATE_LIMIT,
    ScreenState.UPGRADE_PROMPT,
    ScreenState.CONTINUE_PROMPT,
    ScreenState.CRASHED,
    ScreenState.CONNECTION_LOST,
    ScreenState.QUESTION,
    ScreenState.PICKER,
)

# States a provider file may give markers for (draft is found from the input line instead).
MARKER_STATES: frozenset[ScreenState] = frozenset(BLOCKING_PRIORITY) | {
    ScreenState.BUSY,
    ScreenState.IDLE,
}


@dataclass(frozen=True, slots=True)
class Classification:
    """What a screen says about its agent.

    `evidence` is the screen line that decided (empty when nothing matched). `reset_at` is an
    aware instant when the screen names one; `retry_after` the seconds until the CLI (or its
    server) says to try again. `cause` narrows an error state: e.g. `server_error`, `network`,
    `auth`, `billing`, `quota` — or None when the screen does not tell.
    """

    state: ScreenState
    evidence: str = ""
    reset_at: dt.datetime | None = None
    retry_after: float | None = None
    cause: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "state": self.state.value,
            "reset_at": self.reset_at.isoformat() if self.reset_at else None,
            "retry_after": self.retry_after,
            "evidence": self.evidence,
            "cause": self.cause,
        }
