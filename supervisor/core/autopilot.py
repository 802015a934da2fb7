"""The Autopilot decision core: (terminal state, observation, now) → (new state, actions).

Theory of operation (SPEC §4)
-----------------------------
Autopilot only looks at terminals working on a prompt the user sent. It acts on three
triggers: the agent process exited with an error before the prompt finished; the task went
quiet (made no progress for the idle timeout) and its screen confirms it is stuck; a message
to it stalled and the diagnosis says the connection dropped. A task that runs past its soft or
hard timeout, or keeps repeating the same steps, is handled by `core.guards`. Normal exits
(`/exit`, Ctrl-D, status 0, SIGINT/SIGTERM/SIGHUP) are left alone.

What it does, in order of preference: continue in place (process alive, the CLI's own error
asks for a message, the provider declares one) → resume the session in the same pane (by the
pinned session id, else "latest in this directory") and confirm the new process runs → ask
it to continue (setting) → switch to a backup (a seat with one) → wait for the user (never
types into a question, picker or draft; notifies on a login limit or an unclear screen).

Every failed task is one incident, which owns the attempt count: Autopilot's own follow-ups
carry it, only a new user prompt opens a new one. Limits: 5 s / 20 s / 60 s before restarts
1–3, then stop; at most 6 continues/resumes per terminal per rolling hour; 3 failed exits in
120 s → a 120 s cooldown. Never resume into a known limit: wait for its reset time (+ margin),
or cool down (300 s, decaying renewals, restart anyway after 4); server errors wait 30 s; a
login, billing or key error waits for the user. Before acting on a wake-up the screen is read
again: an agent that resumed by itself gets no second continue.

Each call returns the new state and the actions for the shell to carry out; every choice to
act or not is also a `Decision` for the ledger.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import replace
from typing import TYPE_CHECKING

from pitcrew.supervisor.core import guards, recovery
from pitcrew.supervisor.core.health import Health, HealthEvent, IllegalTransition, advance
from pitcrew.supervisor.core.records import (
    Action,
    Badge,
    DeliveryStalled,
    LoopSeen,
    Observation,
    Phase,
    ProcessExited,
    ProcessStarted,
    PromptSubmitted,
    RelaunchRefused,
    ScreenSeen,
    Superseded,
    TaskFinished,
    TerminalState,
    Tick,
    TimedOut,
    Wake,
    WentQuiet,
)
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.core.settings import Context, Mode

USER_SIGNALS = recovery.USER_SIGNALS

if TYPE_CHECKING:
    from random import Random


def decide(
    state: TerminalState, obs: Observation, now: float, ctx: Context, rng: Random
) -> tuple[TerminalState, tuple[Action, ...]]:
    """The core's one entry point. Pure: same inputs, same outputs."""
    plan = recovery.Plan(state, now, ctx, rng)
    match obs:
        case PromptSubmitted():
            _on_prompt(plan, obs)
        case TaskFinished():
            _on_finished(plan, obs)
        case ProcessExited():
            _on_exit(plan, obs)
        case ProcessStarted():
            _on_started(plan, obs)
        case ScreenSeen():
            _on_screen(plan, obs)
        case WentQuiet():
            _on_quiet(plan, obs)
        case DeliveryStalled():
            _on_stalled(plan, obs)
        case Tick():
            _on_tick(plan, obs)
        case Superseded():
            _on_superseded(plan, obs)
        case RelaunchRefused():
            _on_refused(plan, obs)
        case TimedOut():
            guards.on_timeout(plan, obs)
        case LoopSeen():
            guards.on_loop(plan, obs)
    return plan.state, tuple(plan.actions)


def _health(plan: recovery.Plan, event: HealthEvent) -> None:
    with contextlib.suppress(IllegalTransition):  # out of order: the recorded health stays
        plan.state = replace(plan.state, health=advance(plan.state.health, event))


def _on_prompt(plan: recovery.Plan, obs: PromptSubmitted) -> None:
    state = plan.state
    incident = state.incident
    if not obs.by_pitcrew:
        incident = None  # only a new user prompt opens a new incident and resets the count
    _health(plan, HealthEvent.PROMPTED)
    task = (state.task or obs.text) if obs.by_pitcrew else obs.text
    plan.state = replace(plan.state, task=task, incident=incident,
                         session_id=obs.session_id or state.session_id)
    if obs.by_pitcrew and incident is not None and incident.phase is Phase.ASKING:
        plan.state = replace(plan.state, incident=replace(incident, phase=Phase.WATCHING))


def _on_finished(plan: recovery.Plan, obs: TaskFinished) -> None:
    _health(plan, HealthEvent.FINISHED)
    incident = plan.state.incident
    if incident is not None and incident.phase is Phase.WATCHING:
        incident = replace(incident, hold=None, next_at=None)
    plan.state = replace(plan.state, task=None, incident=incident,
                         session_id=obs.session_id or plan.state.session_id)


def _on_started(plan: recovery.Plan, obs: ProcessStarted) -> None:
    state = plan.state
    if obs.generation != state.generation:
        return
    _health(plan, HealthEvent.SEEN_WORKING)
    incident = state.incident
    if incident is not None and incident.phase is Phase.CONFIRMING:
        # CONFIRMING -> CONFIRMING: it runs; it must still run after the settle time
        settle = plan.now + plan.ctx.policy.scaled(plan.ctx.policy.confirm_settle)
        plan.set_incident(started_pid=obs.pid, next_at=settle)
        plan.wake(settle)


def _on_exit(plan: recovery.Plan, obs: ProcessExited) -> None:
    state = plan.state
    if obs.generation != state.generation:
        return  # a late exit of a process Pitcrew already replaced: never remove the new one
    if state.incident is not None and state.incident.phase is Phase.CONFIRMING:
        _health(plan, HealthEvent.SEEN_DEAD)
        plan.resume_failed(obs)  # the relaunch itself died, however (e.g. no such session)
        return
    normal = recovery.normal_exit(obs)
    if normal:
        _health(plan, HealthEvent.FINISHED)
        if state.task is not None:   # every exit mid-task leaves a row, even a wanted one
            why = "you stopped it (^C)" if obs.interrupted else recovery.exit_reason(obs)
            plan.record(Badge.SKIPPED, f"the agent stopped normally mid-task ({why}): "
                        "nothing to resume", obs.screen, trigger="process exited")
        plan.state = replace(plan.state, task=None)
        return
    _health(plan, HealthEvent.SEEN_DEAD)
    if state.task is None:
        return  # no running prompt: not Autopilot's business
    if normal is None:   # not known how it ended: nothing harmful, and the user is told
        plan.unclear_exit(obs)
        return
    plan.state = replace(plan.state, crashes=(*state.crashes, plan.now))
    plan.failure(trigger="process exited", reason=recovery.exit_reason(obs),
                 screen=obs.screen, alive=False)


def _on_superseded(plan: recovery.Plan, obs: Superseded) -> None:
    if plan.state.incident is None:
        return
    plan.record(Badge.SKIPPED, f"did not act: {obs.reason}; the incident is closed")
    plan.state = replace(plan.state, incident=None, task=None)


def _on_refused(plan: recovery.Plan, obs: RelaunchRefused) -> None:
    incident = plan.state.incident
    if incident is None or incident.phase is not Phase.CONFIRMING:
        return
    if obs.busy:   # CONFIRMING -> HOLD: a person is using that shell
        plan.hold("shell_busy", Badge.WAITING, f"did not type the resume command: {obs.reason}",
                  None, notify=True)
        return
    plan.cannot_resume(obs.reason, None)       # CONFIRMING -> HOLD (or the seat's backup)


def _on_screen(plan: recovery.Plan, obs: ScreenSeen) -> None:
    incident = plan.state.incident
    if obs.alive and plan.state.health is Health.BOOTING:
        _health(plan, HealthEvent.SEEN_WORKING)
    if incident is not None and incident.phase is Phase.ASKING:
        plan.ask_to_continue(obs.screen)
    elif (obs.alive and obs.screen.state is ScreenState.RATE_LIMIT and plan.state.task
          and plan.ctx.mode is not Mode.OFF
          and (incident is None or (incident.phase is Phase.WATCHING
                                    and not plan.stale_limit(obs.screen)))):
        # a limit is handled the moment it shows (its reset read then), not once the task
        # has been quiet for the idle timeout: nothing the agent does will end it sooner
        plan.failure(trigger="usage limit", reason="the agent shows a usage limit",
                     screen=obs.screen, alive=True)


ACTING = frozenset({Phase.WAITING, Phase.CONFIRMING, Phase.ASKING})


def _on_quiet(plan: recovery.Plan, obs: WentQuiet) -> None:
    if plan.state.task is None:
        return  # idle tabs are never checked
    incident = plan.state.incident
    if incident is not None and incident.phase in ACTING:
        # Autopilot is already acting here: a resumed agent at its prompt, waiting for the
        # continue message, has not finished its task (reading it so would close the
        # incident, and the continue would open a new one with a fresh attempt count)
        return
    state = obs.screen.state
    if state is ScreenState.IDLE:
        _on_finished(plan, TaskFinished())  # it finished; the transition was missed
        return
    if state is ScreenState.BUSY and not plan.ctx.timer_mode:
        plan.skip(trigger="task went quiet", reason=f"quiet {obs.quiet_for:.0f}s but the "
                  f"screen shows it working ({obs.confirmed_by})", screen=obs.screen)
        return
    _health(plan, HealthEvent.WENT_QUIET)
    plan.failure(trigger="task went quiet", reason=f"no output for {obs.quiet_for:.0f}s; "
                 f"{obs.confirmed_by} says {state.value}", screen=obs.screen, alive=True)


def _on_stalled(plan: recovery.Plan, obs: DeliveryStalled) -> None:
    if obs.screen.state not in (ScreenState.CONNECTION_LOST, ScreenState.CONTINUE_PROMPT):
        return  # only a dropped connection makes a stalled message Autopilot's job
    plan.failure(trigger="message stalled", reason=f"{obs.failures} deliveries failed; "
                 f"{obs.confirmed_by} says {obs.screen.state.value}", screen=obs.screen,
                 alive=True)


def _on_tick(plan: recovery.Plan, obs: Tick) -> None:
    incident = plan.state.incident
    if incident is None:
        return
    if incident.phase is Phase.CONFIRMING and incident.next_at is not None:
        if plan.now < incident.next_at:
            plan.wake(incident.next_at)
        elif incident.started_pid is not None and obs.alive:
            plan.confirmed(incident.started_pid)      # CONFIRMING -> ASKING | WATCHING
            if obs.screen is not None and plan.incident.phase is Phase.ASKING:
                plan.ask_to_continue(obs.screen)      # it may sit at its prompt already
        else:
            plan.resume_failed(None)                  # CONFIRMING -> HOLD (or backup)
        return
    if incident.phase is Phase.WAITING and incident.next_at is not None:
        if plan.now >= incident.next_at:
            plan.act(obs.screen, obs.alive, obs.active)
        else:
            plan.wake(incident.next_at)


def set_mode(state: TerminalState, mode: Mode, now: float, ctx: Context,
             rng: Random) -> tuple[TerminalState, tuple[Action, ...]]:
    """After Pause → on: an incident held only by the pause is acted on again."""
    incident = state.incident
    if mode is not Mode.ON or incident is None or incident.hold != "paused":
        return state, ()
    ctx = dataclasses.replace(ctx, mode=mode)
    plan = recovery.Plan(replace(state, incident=replace(incident, hold=None,
                                                         phase=Phase.WAITING, next_at=now)),
                         now, ctx, rng)
    plan.wake(now)
    return plan.state, tuple(plan.actions)


def restore(state: TerminalState, now: float) -> tuple[Action, ...]:
    """Wake-ups to schedule again after Pitcrew restarts (state.json holds `next_at`)."""
    incident = state.incident
    if incident is None or incident.next_at is None:
        return ()
    if incident.phase in (Phase.WAITING, Phase.CONFIRMING):
        return (Wake(max(now, incident.next_at)),)
    return ()


def resume_now(state: TerminalState, now: float, ctx: Context,
               rng: Random) -> tuple[TerminalState, tuple[Action, ...]]:
    """The user pressed *Resume now* on a waiting incident: act at once, as if the user had
    sent the prompt again — the attempt count and the hourly cap start over (a person chose
    this), but the screen is still read first, so a question or a live limit still holds."""
    incident = state.incident
    if incident is None or incident.phase in (Phase.CONFIRMING, Phase.ASKING):
        return state, ()
    fresh = replace(incident, phase=Phase.WAITING, next_at=now, hold=None, attempts=0,
                    renewals=0)
    plan = recovery.Plan(replace(state, incident=fresh, restarts=(), crashes=()), now, ctx, rng)
    plan.wake(now)
    return plan.state, tuple(plan.actions)
