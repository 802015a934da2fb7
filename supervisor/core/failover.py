"""What a diagnosis sets off (SPEC §3): fail the seat over, hand it to Autopilot, or tell you.

Theory of operation
-------------------
A diagnosis answers for one of two reasons. A running task went quiet: Autopilot gets the
verdict (`WentQuiet`), and a seated terminal whose verdict is a usage or login limit — or,
in Manual timer mode, any verdict — fails over to the seat's backup. A delivery kept
failing: a reset time postpones the terminal's queued messages; a seated terminal with a
limit (or any verdict in timer mode) fails over; a dropped connection or a continue prompt
goes to Autopilot (`DeliveryStalled`); a terminal outside a seat gets a notification.
"""

from __future__ import annotations

from dataclasses import dataclass

from pitcrew.supervisor.core.screen import Classification, ScreenState

FAILOVER_STATES = frozenset({ScreenState.RATE_LIMIT, ScreenState.LOGIN_REQUIRED})
STALL_STATES = frozenset({ScreenState.CONNECTION_LOST, ScreenState.CONTINUE_PROMPT})


@dataclass(frozen=True, slots=True)
class Verdict:
    went_quiet: bool = False        # feed Autopilot a WentQuiet
    stalled: bool = False           # feed Autopilot a DeliveryStalled
    fail_over: bool = False         # hand the seat to its backup
    postpone: bool = False          # hold the terminal's messages until the reset time
    notify: bool = False            # tell the user (a terminal outside a seat)


def after_diagnosis(origin: str, screen: Classification, seated: bool,
                    timer_mode: bool) -> Verdict:
    """`origin`: "quiet" (a running task went quiet) or "delivery" (messages kept failing)."""
    limit = screen.state in FAILOVER_STATES
    if origin == "quiet":
        return Verdict(went_quiet=True, fail_over=seated and (limit or timer_mode))
    fail_over = seated and (limit or timer_mode)
    return Verdict(stalled=not fail_over and screen.state in STALL_STATES,
                   fail_over=fail_over, postpone=screen.reset_at is not None,
                   notify=not seated)


def reason(screen: Classification, zone_label: str | None = None, brief: bool = False) -> str:
    """Why, in a few words; the screen's own line too, except in a brief for another agent
    (it only needs the cause, not the stuck CLI's wording). `zone_label`: the reset time as
    the user reads it."""
    what = screen.state.value.replace("_", " ")
    if zone_label is not None:
        what += f", resets {zone_label}"
    return f"{what}: {screen.evidence}" if screen.evidence and not brief else what
