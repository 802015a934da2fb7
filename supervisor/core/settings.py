"""What the Autopilot core needs to know beyond one terminal's own state."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pitcrew.supervisor.core.policy import DEFAULT_POLICY, RestartPolicy
from pitcrew.supervisor.core.rules import Command


class Mode(enum.StrEnum):
    ON = "on"
    OFF = "off"
    PAUSED = "paused"


@dataclass(frozen=True, slots=True)
class Context:
    mode: Mode = Mode.ON
    ask_to_continue: bool = True
    timer_mode: bool = False             # "Manual timer — no AI": quiet alone means stuck
    resume_by_id: Command | None = None
    resume_latest: Command | None = None
    session_doubt: str | None = None     # no session id pinned, and "latest" may be another
                                         # agent's (two of this CLI in one folder): why
    continue_message: str | None = None  # the provider's continue-in-place message
    has_backup: bool = False
    policy: RestartPolicy = DEFAULT_POLICY
    session_id_pattern: str = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}"   # a plausible id
    wrap_up: bool = False                # at the soft timeout, type the fixed wrap-up message
