"""The Autopilot service over fakes: the mode a user sees, and observations in → what is typed,
relaunched or scheduled (the core's rules themselves are tested in tests/core)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from pitcrew.supervisor.core.records import (
    Badge,
    Incident,
    Phase,
    ProcessExited,
    ProcessStarted,
    PromptSubmitted,
    ScreenSeen,
    TaskFinished,
    Tick,
)
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.core.settings import Mode
from pitcrew.supervisor.service.autopilot import WATCHING, AutopilotService, status_line
from pitcrew.supervisor.service.events import Wakeup
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.config import Config
from tests.service.fakes import BANNER, IDLE, T0, Counted, Rig

S = ScreenState


@dataclass
class Pilot:
    rig: Rig = field(default_factory=Rig)
    config: Config = field(default_factory=lambda: Config(autopilot=True))
    paused: bool = False
    backup: bool = False
    off_for_launch: bool = False
    persist: Counted = field(default_factory=Counted)
    changed: Counted = field(default_factory=Counted)

    def build(self) -> AutopilotService:
        return AutopilotService(self.rig.clock, self.rig.effects, self.persist, self.changed,
                                lambda: self.config, lambda: self.paused,
                                lambda w: self.backup, self.rig.policy, self.off_for_launch,
                                random.Random(7))


def test_the_mode_a_user_sees() -> None:
    pilot = Pilot()
    assert pilot.build().mode() is Mode.ON
    assert pilot.build().status_line() == WATCHING
    pilot.paused = True
    assert pilot.build().mode() is Mode.PAUSED
    assert pilot.build().status_line() == "Paused"
    pilot.config = Config(autopilot=False)
    assert pilot.build().mode() is Mode.OFF                # off wins over paused
    pilot.config, pilot.off_for_launch = Config(autopilot=True), True
    assert pilot.build().status_line() == "Off for this launch."
    assert status_line(Mode.OFF, False) == "Off."


def test_the_context_carries_the_providers_resume_commands_and_the_seat() -> None:
    pilot = Pilot(backup=True, config=Config(autopilot=True, diagnosis_mode="timer"))
    w = pilot.rig.terminal()
    ctx = pilot.build().context_for(w)
    assert ctx.mode is Mode.ON and ctx.has_backup and ctx.timer_mode
    assert ctx.resume_by_id is not None and ctx.resume_by_id.argv[0] == "fakeagent"
    assert ctx.continue_message == "continue"


def test_a_prompt_is_remembered_saved_and_shown() -> None:
    pilot = Pilot()
    w = pilot.rig.terminal()
    pilot.build().feed(w, PromptSubmitted("refactor the parser", session_id="s1"))
    assert w.state.task == "refactor the parser" and w.state.session_id == "s1"
    assert pilot.persist.calls == 1 and pilot.changed.calls == 1


def test_nothing_changed_saves_nothing() -> None:
    pilot = Pilot()
    w = pilot.rig.terminal()
    autopilot = pilot.build()
    autopilot.feed(w, TaskFinished())
    saved, shown = pilot.persist.calls, pilot.changed.calls
    assert autopilot.feed(w, TaskFinished()) == ()         # the same again changes nothing
    assert (pilot.persist.calls, pilot.changed.calls) == (saved, shown)


def crash(pilot: Pilot, w: Watched, autopilot: AutopilotService) -> None:
    autopilot.feed(w, PromptSubmitted("refactor the parser", session_id="s1"))
    autopilot.feed(w, ProcessExited(w.state.generation, status=1,
                                    screen=Classification(S.CRASHED, "fatal")))


def wake_when_due(rig: Rig, autopilot: AutopilotService, w: Watched) -> bool:
    """Run the terminal's pending wake job as the loop does (`Supervisor.wake`): move the clock
    to it, read the screen, feed a Tick. False when there is none."""
    job = rig.scheduler.job(f"wake:{w.key}")
    if job is None:
        return False
    rig.clock.advance(max(0.0, job.when - rig.clock.wall()))
    rig.scheduler.due(job.when)
    reading = rig.reader.read(w)
    autopilot.feed(w, Tick(reading.screen, reading.alive if reading.screen else False, None))
    return True


def test_a_crash_mid_task_is_resumed_in_its_pane_and_asked_to_continue() -> None:
    pilot = Pilot()
    rig = pilot.rig
    w = rig.terminal()
    autopilot = pilot.build()
    crash(pilot, w, autopilot)
    job = rig.scheduler.job("wake:test:%1")
    assert job is not None and job.when == T0 + 5 and job.event == Wakeup("test:%1")
    rig.tmux.panes["%1"] = replace(rig.tmux.panes["%1"], dead=True, dead_status=1)
    rig.tmux.screens["%1"] = BANNER + "fake> refactor the parser\nfatal: simulated crash"
    rig.procs.alive.clear()
    assert wake_when_due(rig, autopilot, w)
    assert rig.tmux.respawned == [("%1", ("fakeagent", "--resume", "s1"), "/work/api")]
    # the relaunched agent runs (the discovery would report it) and shows its empty box
    rig.tmux.panes["%1"] = replace(rig.tmux.panes["%1"], dead=False, dead_status=None)
    rig.tmux.screens["%1"] = IDLE
    rig.procs.alive.add(5151)
    w.agent_pid = 5151
    autopilot.feed(w, ProcessStarted(w.state.generation, 5151))
    for _ in range(3):                                     # a settle time, if the core waits
        if Badge.RESUMED in rig.ledger.badges or not wake_when_due(rig, autopilot, w):
            break
    assert Badge.RESUMED in rig.ledger.badges
    autopilot.feed(w, ScreenSeen(Classification(S.IDLE, "fake>")))
    [typed] = rig.tmux.typed_into("%1")
    assert "continue" in typed.lower()
    assert rig.ledger.badges[-1] is Badge.CONTINUED


def test_off_does_nothing_on_a_crash() -> None:
    pilot = Pilot(config=Config(autopilot=False))
    w = pilot.rig.terminal()
    crash(pilot, w, pilot.build())
    assert pilot.rig.scheduler.jobs == [] and pilot.rig.ledger.rows == []


def test_leaving_pause_acts_on_an_incident_held_by_the_pause() -> None:
    pilot = Pilot()
    w = pilot.rig.terminal(task="fix it", incident=Incident(
        1, "fix it", T0, "process exited", "crashed", phase=Phase.HOLD, hold="paused"))
    other = pilot.rig.terminal("%2")
    pilot.build().mode_changed(pilot.rig.watched)
    assert [j.key for j in pilot.rig.scheduler.jobs] == ["wake:test:%1"]
    assert w.state.incident is not None and w.state.incident.hold is None
    assert other.state.incident is None
    assert pilot.persist.calls == 1


def test_resume_now_without_an_incident_says_so() -> None:
    pilot = Pilot()
    w = pilot.rig.terminal()
    assert pilot.build().resume_now(w) is False
    assert pilot.rig.scheduler.jobs == []


class Disk:
    """A `Persist` port whose disk can be full."""

    def __init__(self) -> None:
        self.full = False
        self.calls = 0

    def __call__(self) -> bool:
        self.calls += 1
        return not self.full


def test_a_decision_that_cannot_be_written_down_is_not_acted_on_until_it_can() -> None:
    disk = Disk()
    pilot = Pilot()
    rig = pilot.rig
    w = rig.terminal()
    autopilot = AutopilotService(rig.clock, rig.effects, disk, pilot.changed,
                                 lambda: pilot.config, lambda: False, lambda w: False,
                                 rig.policy, False, random.Random(7))
    autopilot.feed(w, PromptSubmitted("refactor the parser", session_id="s1"))
    disk.full = True
    before = w.state
    exited = ProcessExited(w.state.generation, status=1,
                           screen=Classification(S.CRASHED, "fatal"))
    assert autopilot.feed(w, exited) == ()
    assert w.state == before and rig.scheduler.job(f"wake:{w.key}") is None
    assert rig.ledger.badges == [] and autopilot.held == [(w.key, exited)]
    disk.full = False
    assert autopilot.catch_up({w.key: w}) == 1 and autopilot.held == []
    assert rig.ledger.badges == [Badge.SCHEDULED]
    assert rig.scheduler.job(f"wake:{w.key}") is not None and w.state.incident is not None
    assert autopilot.catch_up({w.key: w}) == 0            # decided once
