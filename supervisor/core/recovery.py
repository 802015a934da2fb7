"""The steps of a recovery, for `autopilot.decide`: open an incident, pick the next step,
check the limits, act when the wait is over, and write each choice down as a `Decision`.

`Plan` gathers a new state and the actions for one call of `decide`; it does no I/O.
"""

from __future__ import annotations

import re
import signal as signals
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pitcrew.supervisor.core import policy as pol
from pitcrew.supervisor.core.health import HealthEvent, advance
from pitcrew.supervisor.core.records import (
    Action,
    Badge,
    Decision,
    Incident,
    Notify,
    Phase,
    ProcessExited,
    Record,
    Relaunch,
    SwitchToBackup,
    TerminalState,
    TextKind,
    TypeText,
    Wake,
)
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.core.settings import Context, Mode

CONTINUE_MESSAGE = (
    "Continue from where you stopped. Do not redo steps that are already finished; if a step "
    "was interrupted, check its result before repeating it."
)
# A screen left behind by an exit with no known status that means it failed.
FAILURE_SCREENS = frozenset({
    ScreenState.CRASHED, ScreenState.CONNECTION_LOST, ScreenState.RATE_LIMIT,
    ScreenState.LOGIN_REQUIRED, ScreenState.CONTINUE_PROMPT,
})
# Exit signals a person sends on purpose (Ctrl-C, kill, closing the pane): not failures.
USER_SIGNALS = frozenset({1, 2, 15})   # SIGHUP, SIGINT, SIGTERM
GOODBYE = "goodbye"       # core.classifier: the cause of an `exited` screen showing it
UNCLEAR_EXIT = ("the agent exited mid-task and Pitcrew couldn't tell how (no exit status, no "
                "goodbye from the CLI, no signal reported by the shell): not resumed. If it "
                "crashed, resume it yourself or press Resume now")
USER_INPUT = frozenset({ScreenState.QUESTION, ScreenState.PICKER, ScreenState.DRAFT})
PERMANENT_CAUSES = frozenset({"auth", "billing"})
# holds under which a new failure is looked at again (a loop held for you never hides a crash)
REVISITED_HOLDS = frozenset({"user", "unclear", "paused", "looping"})
PROMPT_CHARS = 60

if TYPE_CHECKING:
    from random import Random


def short(prompt: str) -> str:
    one_line = " ".join(prompt.split())
    return one_line if len(one_line) <= PROMPT_CHARS else one_line[: PROMPT_CHARS - 1] + "…"


def normal_exit(obs: ProcessExited) -> bool | None:
    """How the agent ended, from facts only: True for a normal exit (status 0; a signal a
    person sends; the `^C` a person typed; the CLI's own goodbye on screen), False for a
    failure (another status or signal; a last screen that shows one: a stack trace, a fatal
    error, a limit), None when nothing tells (an agent started from a shell that left only
    its shell's prompt behind). A shell prompt is never taken for a crash by itself."""
    if obs.status is not None or obs.signal is not None:
        return obs.status == 0 or obs.signal in USER_SIGNALS
    if obs.interrupted:
        return True
    screen = obs.screen.state if obs.screen else ScreenState.UNKNOWN
    if screen is ScreenState.EXITED and obs.screen is not None and obs.screen.cause == GOODBYE:
        return True
    if screen in FAILURE_SCREENS:
        return False
    return None


def exit_reason(obs: ProcessExited) -> str:
    if obs.screen is not None and obs.screen.cause == GOODBYE and obs.status is None \
            and obs.signal is None:
        return f"its own goodbye: {obs.screen.evidence}"
    if obs.signal is not None:
        try:
            name = signals.Signals(obs.signal).name
        except ValueError:
            name = f"signal {obs.signal}"
        return f"killed by {name}"
    if obs.status is not None:
        return f"exited with status {obs.status}"
    if obs.screen is not None and obs.screen.evidence:
        return f"exited; last words: {obs.screen.evidence}"
    return "exited"


class Plan:
    def __init__(self, state: TerminalState, now: float, ctx: Context, rng: Random):
        self.state = state
        self.now = now
        self.ctx = ctx
        self.rng = rng
        self.actions: list[Action] = []

    # -- bookkeeping -------------------------------------------------------------------------

    @property
    def incident(self) -> Incident:
        assert self.state.incident is not None
        return self.state.incident

    def set_incident(self, **changes: Any) -> None:
        self.state = replace(self.state, incident=replace(self.incident, **changes))

    def wake(self, at: float) -> None:
        self.actions.append(Wake(at))

    def record(self, badge: Badge, reason: str, screen: Classification | None = None,
               trigger: str | None = None, **readings: object) -> None:
        inc = self.state.incident
        if inc is not None:
            readings.setdefault("incident", inc.number)   # the report groups rows by it
        if screen is not None:
            readings.setdefault("screen", screen.state.value)
            if screen.evidence:
                readings.setdefault("evidence", screen.evidence)
            if screen.reset_at is not None:
                readings.setdefault("reset_at", screen.reset_at.isoformat())
        self.actions.append(Record(Decision(
            badge=badge, at=self.now, terminal=self.state.terminal, agent=self.state.agent,
            prompt=inc.prompt if inc else (self.state.task or ""),
            project=self.state.project, trigger=trigger or (inc.trigger if inc else ""),
            reason=reason, attempt=inc.attempts if inc else 0, readings=readings,
        )))

    def notify(self, title: str, body: str, key: str) -> None:
        self.actions.append(Notify(title, body, f"{self.state.terminal}:{key}"))

    def recent_restarts(self) -> tuple[float, ...]:
        hour = self.ctx.policy.hour
        return tuple(t for t in self.state.restarts if t > self.now - hour)

    def recent_crashes(self) -> tuple[float, ...]:
        window = self.ctx.policy.crash_loop_window
        return tuple(t for t in self.state.crashes if t > self.now - window)

    # -- a task failed ------------------------------------------------------------------------

    def open_incident(self, trigger: str, reason: str) -> bool:
        """Open the task's incident, or take up the open one again; False when it is not to
        be acted on (already on it, given up, or waiting on the user)."""
        st = self.state
        inc = st.incident
        if inc is not None and inc.phase in (Phase.WAITING, Phase.CONFIRMING):
            return False  # already on it
        if inc is not None and inc.phase is Phase.STOPPED:
            return False  # gave up on this task; only a new prompt starts over
        if inc is not None and inc.phase is Phase.HOLD and inc.hold not in REVISITED_HOLDS:
            return False  # waiting on the user (a login, the hourly cap, …): a new prompt
            # frees it
        if inc is None:
            inc = Incident(number=st.incidents_opened + 1, prompt=st.task or "",
                           opened_at=self.now, trigger=trigger, reason=reason)
            self.state = replace(st, incident=inc, incidents_opened=st.incidents_opened + 1)
        else:
            self.set_incident(trigger=trigger, reason=reason, hold=None)
        return True

    def unclear_exit(self, obs: ProcessExited) -> None:
        """The agent exited mid-task and nothing tells how: resuming it could restart an
        agent the user closed, so nothing is typed; the user is told, and can resume it."""
        if not self.open_incident("process exited", exit_reason(obs)):
            return
        if self.ctx.mode is Mode.OFF:
            return
        self.hold("exit_unclear", Badge.WAITING, UNCLEAR_EXIT, obs.screen, notify=True)

    def failure(self, trigger: str, reason: str, screen: Classification | None,
                alive: bool) -> None:
        if not self.open_incident(trigger, reason):
            return
        self.state = replace(self.state, crashes=self.recent_crashes(),
                             restarts=self.recent_restarts())
        if self.ctx.mode is Mode.OFF:
            return
        self.next_step(screen, alive)

    def next_step(self, screen: Classification | None, alive: bool) -> None:
        """Choose the next step for the open incident from what the screen says."""
        p = self.ctx.policy
        state = screen.state if screen is not None else ScreenState.UNKNOWN
        cause = screen.cause if screen is not None else None
        if alive and state in USER_INPUT:
            self.hold("user", Badge.WAITING, f"{state.value.replace('_', ' ')} on screen: "
                      "left for you", screen, notify=False)
            return
        if state is ScreenState.LOGIN_REQUIRED or cause in PERMANENT_CAUSES:
            self.hold("login", Badge.WAITING, "the agent needs you to log in"
                      if state is ScreenState.LOGIN_REQUIRED else f"{cause} error: waits for you",
                      screen, notify=True)
            return
        if alive and state is ScreenState.UNKNOWN:
            self.hold("unclear", Badge.WAITING, "the screen does not say what is wrong",
                      screen, notify=True)
            return
        if state is ScreenState.RATE_LIMIT:
            self.limit_wait(screen)
            return
        if self.ctx.mode is Mode.PAUSED:
            self.hold("paused", Badge.WAITING, "Autopilot is paused", screen, notify=False)
            return
        if not self.within_caps(screen):
            return
        inc = self.incident
        delay = pol.backoff(p, inc.attempts + 1)
        why = f"waiting {delay:g}s before restart {inc.attempts + 1} of {p.max_attempts}"
        crashes = len(self.recent_crashes())
        if crashes >= p.crash_loop_count and p.scaled(p.crash_loop_cooldown) > delay:
            delay = p.scaled(p.crash_loop_cooldown)
            why = (f"{crashes} crashes within {p.crash_loop_window:g}s: cooling down "
                   f"{delay:g}s")
        if cause == "server_error" and p.scaled(p.server_error_wait) > delay:
            delay = p.scaled(p.server_error_wait)
            why = f"server error: waiting {delay:g}s"
        if screen is not None and screen.retry_after is not None \
                and p.scaled(screen.retry_after) > delay:
            delay = p.scaled(screen.retry_after)
            why = f"the server says retry after {screen.retry_after:g}s"
        self.set_incident(phase=Phase.WAITING, next_at=self.now + delay, hold=None)
        self.record(Badge.SCHEDULED, why, screen, wake_at=self.now + delay)
        self.wake(self.now + delay)

    def within_caps(self, screen: Classification | None) -> bool:
        p = self.ctx.policy
        inc = self.incident
        if inc.attempts >= p.max_attempts:
            message = (f'Stopped retrying "{short(inc.prompt)}" after {inc.attempts} resumes; '
                       "waiting on you.")
            self.set_incident(phase=Phase.STOPPED, next_at=None)
            self.record(Badge.STOPPED, message, screen)
            self.notify(message, f"{self.state.agent} in {self.state.project}", "stopped")
            return False
        if len(self.recent_restarts()) >= p.hourly_cap:
            message = (f'"{self.state.agent}" has been continued or resumed {p.hourly_cap} times '
                       "this hour; Autopilot is waiting on you.")
            self.set_incident(phase=Phase.HOLD, hold="hourly_cap", next_at=None)
            self.record(Badge.WAITING, message, screen)
            self.notify(message, f'Task: "{short(inc.prompt)}"', "hourly_cap")
            return False
        return True

    def hold(self, why: str, badge: Badge, reason: str, screen: Classification | None,
             notify: bool) -> None:
        self.set_incident(phase=Phase.HOLD, hold=why, next_at=None)
        self.record(badge, reason, screen, notified=notify)
        if notify:
            title = f'"{self.state.agent}" is waiting on you'
            body = reason + (f": {screen.evidence}" if screen and screen.evidence else "")
            self.notify(title, body, why)

    def limit_wait(self, screen: Classification | None) -> None:
        """Never resume into a known limit: wait for its reset, or cool down."""
        p = self.ctx.policy
        inc = self.incident
        reset_at = screen.reset_at if screen is not None else None
        if reset_at is not None:
            delay = pol.reset_wait(p, reset_at.timestamp() - self.now, self.rng)
            reason = f"usage limit; resumes after it resets at {reset_at.isoformat()}"
        elif screen is not None and screen.retry_after is not None:
            delay = p.scaled(max(screen.retry_after, 1.0))
            reason = f"rate limited; the server says retry after {screen.retry_after:g}s"
        elif screen is not None and screen.cause == "rate":   # a 429, not a used-up quota
            delay = p.scaled(p.rate_limit_retry)
            reason = f"rate limited (429); retrying after {delay:.0f}s"
        else:
            delay = pol.rate_limit_cooldown(p, inc.renewals)
            reason = (f"usage limit with no reset time; cooling down {delay:.0f}s"
                      + (f" (renewal {inc.renewals})" if inc.renewals else ""))
        # the reset is read once, when its line first appears, and stays with the incident
        self.set_incident(phase=Phase.WAITING, hold="rate_limit", next_at=self.now + delay,
                          reset_at=reset_at.timestamp() if reset_at is not None else None,
                          limit_line=screen.evidence if screen is not None else None)
        self.record(Badge.SCHEDULED, reason, screen, wake_at=self.now + delay)
        self.wake(self.now + delay)

    def stale_limit(self, screen: Classification | None) -> bool:
        """The limit line on screen is the one this incident waited out: its reset has passed,
        so it is history (read again now it would roll over to tomorrow's clock time)."""
        inc = self.incident
        return (screen is not None and inc.reset_at is not None and self.now >= inc.reset_at
                and bool(inc.limit_line) and screen.evidence == inc.limit_line)

    # -- the wait is over -----------------------------------------------------------------

    def act(self, screen: Classification | None, alive: bool | None,
            active: bool | None = None) -> None:
        if self.ctx.mode is Mode.OFF:
            return
        inc = self.incident
        state = screen.state if screen is not None else ScreenState.UNKNOWN
        if self.ctx.mode is Mode.PAUSED:
            self.hold("paused", Badge.WAITING, "Autopilot is paused", screen, notify=False)
            return
        if alive and state is ScreenState.BUSY and active is not False:
            self.set_incident(phase=Phase.WATCHING, hold=None, next_at=None)
            self.record(Badge.SKIPPED, "the agent is working again by itself: no second "
                        "continue", screen)
            return
        if alive and state in USER_INPUT:
            self.hold("user", Badge.WAITING, f"{state.value} on screen: left for you", screen,
                      notify=False)
            return
        if state is ScreenState.LOGIN_REQUIRED:
            self.hold("login", Badge.WAITING, "the agent needs you to log in", screen, True)
            return
        stale = inc.hold == "rate_limit" and state is ScreenState.RATE_LIMIT and \
            self.stale_limit(screen)
        if inc.hold == "rate_limit" and state is ScreenState.RATE_LIMIT and alive and not stale:
            renewals = inc.renewals + 1
            if renewals <= self.ctx.policy.rate_limit_renewals:
                self.set_incident(renewals=renewals)
                self.limit_wait(screen if screen and screen.reset_at else None)
                return
        if not self.within_caps(screen):
            return
        if alive and state is ScreenState.CONTINUE_PROMPT and self.ctx.continue_message:
            self.count_attempt()
            self.actions.append(TypeText(self.ctx.continue_message, TextKind.CONTINUE_IN_PLACE))
            self.set_incident(phase=Phase.WATCHING, hold=None, next_at=None)
            self.record(Badge.CONTINUED, "continued in place with the CLI's own message", screen)
            return
        if alive and (state is ScreenState.IDLE or stale):
            self.count_attempt()
            self.actions.append(TypeText(CONTINUE_MESSAGE, TextKind.CONTINUE))
            self.set_incident(phase=Phase.WATCHING, hold=None, next_at=None)
            self.record(Badge.CONTINUED, "the agent is ready again: asked it to continue", screen)
            return
        self.relaunch(kill_first=bool(alive), screen=screen)

    def count_attempt(self) -> None:
        self.set_incident(attempts=self.incident.attempts + 1)
        self.state = replace(self.state, restarts=(*self.recent_restarts(), self.now))

    def relaunch(self, kill_first: bool, screen: Classification | None) -> None:
        st = self.state
        argv: tuple[str, ...] | None = None
        plausible = st.session_id is not None and re.fullmatch(
            self.ctx.session_id_pattern, st.session_id) is not None
        if st.session_id and not plausible:   # never typed: it may have come from a screen
            self.record(Badge.SKIPPED, "the pinned session id does not look like one of this "
                        "CLI's; not resuming by it", screen, session_id=st.session_id[:80])
        if plausible and self.ctx.resume_by_id is not None:
            argv = self.ctx.resume_by_id.render(session_id=st.session_id or "")
        elif self.ctx.session_doubt is not None:   # "latest" could be the other agent's
            self.cannot_resume(f"did not resume: {self.ctx.session_doubt}; resume it yourself "
                               "with its own session id", screen)
            return
        elif self.ctx.resume_latest is not None:
            argv = self.ctx.resume_latest.render()
        if argv is None:
            self.cannot_resume("no session to resume: the CLI has no resume command for it",
                               screen)
            return
        self.count_attempt()
        generation = st.generation + 1
        deadline = self.now + self.ctx.policy.scaled(self.ctx.policy.confirm_timeout)
        self.state = replace(self.state, generation=generation,
                             health=advance(self.state.health, HealthEvent.RELAUNCHED))
        self.set_incident(phase=Phase.CONFIRMING, next_at=deadline, hold=None, started_pid=None)
        self.actions.append(Relaunch(argv, generation, kill_first, st.session_id))
        self.wake(deadline)

    def confirmed(self, pid: int) -> None:
        inc = self.incident
        how = "by session id" if self.state.session_id and self.ctx.resume_by_id else "latest"
        self.record(Badge.RESUMED, f"resumed the session ({how}) in the same pane; "
                    f"attempt {inc.attempts}", None, pid=pid, session_id=self.state.session_id)
        phase = Phase.ASKING if self.ctx.ask_to_continue else Phase.WATCHING
        self.set_incident(phase=phase, next_at=None, started_pid=None)

    def resume_failed(self, obs: ProcessExited | None) -> None:
        if obs is not None:
            why = f"the resumed agent {exit_reason(obs)}"
        elif self.incident.started_pid is not None:
            why = "the resumed agent stopped right after it started"
        else:
            why = "the resumed agent did not start"
        self.cannot_resume(why, obs.screen if obs else None,
                           last_lines=list(obs.tail) if obs else [],
                           status=obs.status if obs else None)

    def cannot_resume(self, reason: str, screen: Classification | None,
                      **readings: object) -> None:
        if self.ctx.has_backup and self.ctx.mode is Mode.ON:
            self.set_incident(phase=Phase.HOLD, hold="backup", next_at=None)
            self.actions.append(SwitchToBackup(reason))
            self.record(Badge.SWITCHED, f"{reason}; handing the task to the seat's backup",
                        screen)
            return
        self.set_incident(phase=Phase.HOLD, hold="cannot_resume", next_at=None)
        self.record(Badge.COULDNT_RESUME, reason, screen, None, **readings)
        self.notify(f"Couldn't resume \"{self.state.agent}\"", reason, "cannot_resume")

    def ask_to_continue(self, screen: Classification) -> None:
        state = screen.state
        if state is ScreenState.BUSY:
            self.set_incident(phase=Phase.WATCHING)  # it went on by itself: no second continue
            return
        if state is ScreenState.IDLE:
            self.actions.append(TypeText(CONTINUE_MESSAGE, TextKind.CONTINUE))
            self.set_incident(phase=Phase.WATCHING)
            self.record(Badge.CONTINUED, "asked the resumed agent to continue", screen)
            return
        if state in USER_INPUT:
            self.hold("user", Badge.WAITING, f"{state.value} on screen after the resume: "
                      "left for you", screen, notify=False)
            return
        if state in (ScreenState.LOGIN_REQUIRED, ScreenState.RATE_LIMIT):
            self.next_step(screen, alive=True)

    def skip(self, trigger: str, reason: str, screen: Classification | None) -> None:
        self.record(Badge.SKIPPED, reason, screen, trigger=trigger)
