"""What Autopilot does when a task runs too long or goes round in circles (issue #14).

* soft timeout — a ledger row (`Timed out`, "running for 20 min") and a notification; with
  `wrap_up` on and the agent visibly working, the fixed WRAP_UP_MESSAGE is typed as well.
* hard timeout — the terminal's incident is put on hold (`hard_timeout`): Autopilot stops
  acting for that terminal (like Pause, for one terminal) until a new prompt from you or
  *Resume now*; the agent is not killed.
* not started — a ledger row; the shell then runs today's failed-delivery diagnosis.
* a loop, first seen — health `looping`, a `Looping` row saying what repeats and what the
  diagnosis read; a screen that shows a real stoppage (a limit, a lost connection) goes on to
  the usual recovery.
* a loop that persists after that diagnosis — hold (`looping`) and notify with what it kept
  repeating.

Every row carries `readings.timeout` or `readings.loop` so a report can flag it.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING

from pitcrew.supervisor.core.health import HealthEvent, IllegalTransition, advance
from pitcrew.supervisor.core.records import (
    Badge,
    Incident,
    LoopSeen,
    Phase,
    Record,
    TextKind,
    TimedOut,
    TypeText,
)
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.core.settings import Mode
from pitcrew.supervisor.core.timeouts import WRAP_UP_MESSAGE, Timeout, duration

if TYPE_CHECKING:
    from pitcrew.supervisor.core.recovery import Plan

# A loop's screen that is a stoppage of its own: the usual recovery takes it from there.
ERROR_CAUSES = frozenset({"server_error", "rate", "quota", "auth", "billing"})
STOPPAGE = frozenset({ScreenState.RATE_LIMIT, ScreenState.LOGIN_REQUIRED,
                      ScreenState.CONNECTION_LOST, ScreenState.CONTINUE_PROMPT})


def on_timeout(plan: Plan, obs: TimedOut) -> None:
    st = plan.state
    if plan.ctx.mode is Mode.OFF:
        return
    kind = Timeout(obs.kind)
    after = duration(obs.after)
    if kind is Timeout.NOT_STARTED:
        plan.record(Badge.TIMED_OUT, f"not started within {after} of a message typed to it: "
                    "a failed delivery, diagnosing", obs.screen,
                    trigger="not started", timeout=kind.value, seconds=round(obs.after))
        return
    if st.task is None:
        return   # the task finished meanwhile
    if kind is Timeout.SOFT:
        plan.record(Badge.TIMED_OUT, f"running for {after}", obs.screen, trigger="soft timeout",
                    timeout=kind.value, seconds=round(obs.after))
        plan.notify(f'"{st.agent}" has been running for {after}',
                    f'Task: "{_short(st.task)}" in {st.project}', "soft_timeout")
        busy = obs.screen is not None and obs.screen.state is ScreenState.BUSY
        if plan.ctx.wrap_up and busy and plan.ctx.mode is Mode.ON:
            plan.actions.append(TypeText(WRAP_UP_MESSAGE, TextKind.WRAP_UP))
        return
    if kind is Timeout.HARD:
        _open_incident(plan, "hard timeout", f"ran for {after}")
        plan.hold("hard_timeout", Badge.TIMED_OUT, f"ran for {after}, past the hard limit: "
                  "Autopilot stops acting for this terminal until you send a new prompt "
                  "(the agent keeps running)", obs.screen, notify=True)
        _tag(plan, timeout=kind.value, seconds=round(obs.after))


def on_loop(plan: Plan, obs: LoopSeen) -> None:
    st = plan.state
    if st.task is None or plan.ctx.mode is Mode.OFF:
        return
    with contextlib.suppress(IllegalTransition):
        plan.state = replace(st, health=advance(st.health, HealthEvent.LOOPED))
    busy_with = st.incident.phase if st.incident is not None else None
    if obs.persists and busy_with in (Phase.WAITING, Phase.CONFIRMING, Phase.ASKING):
        return   # Autopilot is already acting on this task (a crash, an error's wait): no hold
    if obs.persists:
        _open_incident(plan, "stuck in a loop", f"kept repeating {obs.what}")
        plan.hold("looping", Badge.LOOPING, f"kept repeating {obs.what} after a diagnosis: "
                  "Autopilot stops acting for this terminal until you send a new prompt",
                  obs.screen, notify=True)
        _tag(plan, loop=obs.what, persists=True)
        return
    state = obs.screen.state if obs.screen is not None else ScreenState.UNKNOWN
    plan.record(Badge.LOOPING, f"repeats {obs.what}; {obs.confirmed_by} says {state.value}",
                obs.screen, trigger="stuck in a loop", loop=obs.what, persists=False)
    if state in STOPPAGE or (obs.screen is not None and obs.screen.cause in ERROR_CAUSES):
        # the CLI's own error, repeating: handled by its class (server error: wait 30 s; a key
        # or billing error: wait for you; …), as when it first shows
        plan.failure(trigger="stuck in a loop", reason=f"repeats {obs.what}; "
                     f"{obs.confirmed_by} says {state.value}", screen=obs.screen, alive=True)


def _open_incident(plan: Plan, trigger: str, reason: str) -> None:
    """An incident to hold (the running task's), opened if there is none."""
    st = plan.state
    if st.incident is None:
        inc = Incident(number=st.incidents_opened + 1, prompt=st.task or "",
                       opened_at=plan.now, trigger=trigger, reason=reason)
        plan.state = replace(st, incident=inc, incidents_opened=st.incidents_opened + 1)
    else:
        plan.set_incident(trigger=trigger, reason=reason, phase=Phase.HOLD)


def _tag(plan: Plan, **readings: object) -> None:
    """Add readings to the row `hold` just wrote."""
    for i in range(len(plan.actions) - 1, -1, -1):
        action = plan.actions[i]
        if isinstance(action, Record):
            d = action.decision
            plan.actions[i] = Record(replace(d, readings={**d.readings, **readings}))
            return


def _short(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= 60 else one[:59] + "…"
