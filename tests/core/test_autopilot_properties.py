"""Invariants of the Autopilot core over arbitrary sequences of observations (hypothesis)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random

from hypothesis import event, given, settings
from hypothesis import strategies as st

from pitcrew.supervisor.core.autopilot import decide
from pitcrew.supervisor.core.records import (
    DeliveryStalled,
    ProcessExited,
    ProcessStarted,
    PromptSubmitted,
    Relaunch,
    ScreenSeen,
    TaskFinished,
    TerminalState,
    TextKind,
    Tick,
    TypeText,
    WentQuiet,
)
from pitcrew.supervisor.core.rules import Command
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.core.settings import Context, Mode

T0 = 1_800_000_000.0
CTX = Context(resume_by_id=Command(("a", "--resume", "{session_id}")),
              resume_latest=Command(("a", "-c")), continue_message="continue")
S = ScreenState


@st.composite
def screens(draw) -> Classification:
    state = draw(st.sampled_from([*ScreenState, S.CRASHED, S.CRASHED, S.CONNECTION_LOST,
                                  S.IDLE, S.RATE_LIMIT]))
    reset = None
    if state is S.RATE_LIMIT and draw(st.booleans()):
        reset = dt.datetime.fromtimestamp(T0 + draw(st.integers(0, 20_000)), dt.UTC)
    cause = draw(st.sampled_from([None, None, "server_error", "rate", "auth", "network"]))
    retry = draw(st.sampled_from([None, None, 5.0, 30.0]))
    return Classification(state, state.value, reset, retry, cause)


@st.composite
def observations(draw, generation_hint: int = 0):
    kind = draw(st.sampled_from(["prompt", "pitcrew", "finished", "exit", "exit", "started",
                                 "started", "screen", "quiet", "stalled", "tick", "tick",
                                 "tick"]))
    gen = draw(st.sampled_from([-1, -1, -1, 0]))   # -1: the current generation
    if kind == "prompt":
        if draw(st.integers(0, 2)):   # mostly a follow-up while a task runs
            return TaskFinished() if draw(st.booleans()) else Tick()
        return PromptSubmitted(draw(st.sampled_from(["fix it", "add tests"])), session_id="s1")
    if kind == "pitcrew":
        return PromptSubmitted("continue", by_pitcrew=True)
    if kind == "finished":
        return TaskFinished()
    if kind == "exit":
        return ProcessExited(gen, status=draw(st.sampled_from([None, 0, 1, 1, 137])),
                             signal=draw(st.sampled_from([None, None, None, 2, 9])),
                             screen=draw(screens()))
    if kind == "started":
        return ProcessStarted(gen, pid=100 + gen)
    if kind == "screen":
        return ScreenSeen(draw(screens()), alive=draw(st.booleans()))
    if kind == "quiet":
        return WentQuiet(draw(screens()), quiet_for=300)
    if kind == "stalled":
        return DeliveryStalled(draw(screens()), failures=8)
    return Tick(draw(screens()), alive=draw(st.booleans()))





def carried_screen(obs) -> Classification | None:
    return getattr(obs, "screen", None)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(observations(), st.floats(0, 900, allow_nan=False)),
             min_size=10, max_size=80),
    st.sampled_from([Mode.ON, Mode.ON, Mode.PAUSED, Mode.OFF]),
)
def test_autopilot_invariants(steps, mode) -> None:
    ctx = dataclasses.replace(CTX, mode=mode)
    state = TerminalState(terminal="t", agent="A", project="/p")
    rng = random.Random(0)
    now = T0
    restarts_this_prompt = 0
    restart_times: list[float] = []
    limit_until: float | None = None
    last_incident = None
    for obs, gap in [(PromptSubmitted("start", session_id="s0"), 0.0), *steps]:
        now += gap
        if isinstance(obs, ProcessExited | ProcessStarted) and obs.generation < 0:
            obs = dataclasses.replace(obs, generation=state.generation)
        before = state.incident
        state, actions = decide(state, obs, now, ctx, rng)
        user_prompt = isinstance(obs, PromptSubmitted) and not obs.by_pitcrew
        if user_prompt:
            restarts_this_prompt = 0
            limit_until = None
        restarts = [a for a in actions if isinstance(a, Relaunch)
                    or (isinstance(a, TypeText) and a.kind is TextKind.CONTINUE_IN_PLACE)]
        restarts_this_prompt += len(restarts)
        restart_times += [now] * len(restarts)
        typed = [a for a in actions if isinstance(a, TypeText)]
        # never more than 3 restarts per incident (a prompt's failures are one incident)
        assert restarts_this_prompt <= 3
        assert state.incident is None or state.incident.attempts <= 3
        # never more than 6 continues/resumes per terminal per rolling hour
        assert sum(1 for t in restart_times if t > now - 3600) <= 6
        # never text typed into a question, picker or draft it was just shown
        screen = carried_screen(obs)
        if screen is not None and screen.state in (S.QUESTION, S.PICKER, S.DRAFT):
            assert not typed
        # never a restart into a known limit before its reset
        if limit_until is not None and now < limit_until:
            assert not restarts and not typed
        # (once the core has adopted a reset time: a second exit notice for a process that
        # already exited is ignored, limit screen and all)
        if (screen is not None and screen.state is S.RATE_LIMIT and screen.reset_at
                and state.incident is not None and state.incident.hold == "rate_limit"
                and (state.incident.next_at or 0) >= screen.reset_at.timestamp()):
            limit_until = screen.reset_at.timestamp()
        # attempts only reset by a new user prompt
        if before is not None and state.incident is not None and not user_prompt:
            assert state.incident.number == before.number
            assert state.incident.attempts >= before.attempts
        if before is not None and state.incident is None:
            assert user_prompt
        # Off does nothing at all
        if mode is Mode.OFF:
            assert not restarts and not typed
        last_incident = state.incident
    del last_incident
    event(f"restarts in the run: {min(len(restart_times), 4)}")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["crash", "crash", "crash", "prompt", "limit"]),
                          st.floats(1, 400, allow_nan=False)), min_size=5, max_size=40))
def test_crash_storms_respect_every_cap(storm) -> None:
    """An agent that keeps dying: the shell wakes the core exactly when asked."""
    state = TerminalState(terminal="t", agent="A", project="/p")
    rng = random.Random(1)
    now = T0
    state, _ = decide(state, PromptSubmitted("task", session_id="s"), now, CTX, rng)
    per_prompt = 0
    times: list[float] = []
    for what, gap in storm:
        now += gap
        if what == "prompt":
            state, _ = decide(state, PromptSubmitted("next task", session_id="s"), now, CTX, rng)
            per_prompt = 0
            continue
        screen = (Classification(S.RATE_LIMIT, "limit", dt.datetime.fromtimestamp(now + 4000,
                                                                                   dt.UTC))
                  if what == "limit" else Classification(S.CRASHED, "boom"))
        state, out = decide(state, ProcessExited(state.generation, status=1, screen=screen),
                            now, CTX, rng)
        limited_until = now + 4000 if what == "limit" else None
        for _ in range(3):   # follow the core's own wake-ups
            wakes = [a.at for a in out if type(a).__name__ == "Wake"]
            if not wakes:
                break
            now = max(now, wakes[-1])
            state, out = decide(state, Tick(Classification(S.CRASHED, "boom"), alive=False),
                                now, CTX, rng)
            relaunches = [a for a in out if isinstance(a, Relaunch)]
            if limited_until is not None:
                assert not relaunches or now >= limited_until
            per_prompt += len(relaunches)
            times += [now] * len(relaunches)
            for r in relaunches:
                state, out = decide(state, ProcessStarted(r.generation, pid=1), now, CTX, rng)
        assert per_prompt <= 3
        assert sum(1 for t in times if t > now - 3600) <= 6
    event(f"relaunches: {min(len(times), 6)}")
