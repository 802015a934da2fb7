"""The loop's dispatch, over fakes: `Supervisor` built on a recording tmux, a fake clock and a
fake scheduler standing in for APScheduler. Nothing runs the loop: no control-mode client,
no tmux, no process walk (the discovery's finder and probes are fakes); only the exit
watcher's idle thread is started, so that shutdown closes its pipe. Each event is handed to
`handle` as the loop would, and the test looks at what a user would see: what was typed,
which job is waiting, which ledger row."""

from __future__ import annotations

import json
from dataclasses import replace

from pitcrew.supervisor.adapters.checker_cli import Diagnosis
from pitcrew.supervisor.adapters.exits import ExitWatcher
from pitcrew.supervisor.api.commands import ChangeState, Send
from pitcrew.supervisor.core.delivery import Status
from pitcrew.supervisor.core.records import Incident, Phase, Superseded
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.service import housekeeping, loop
from pitcrew.supervisor.service.events import (
    Activity,
    Attached,
    CommandArrived,
    DeliveryDue,
    DiagnosisDone,
    Output,
    PressEnter,
    ProcessGone,
    Report,
    Wakeup,
)
from tests.service.fakes import AGENT_PID, IDLE, T0, Loop, draft


def test_a_send_command_types_the_message_and_its_enter_is_a_job(lp: Loop) -> None:
    lp.watch()
    lp.sup.handle(CommandArrived(Send("%1", "run the tests", id="m1")))
    assert lp.tmux.typed_into("%1") == ["run the tests"]
    assert lp.tmux.enters("%1") == 0
    assert [type(e) for e in lp.jobs.events(PressEnter)] == [PressEnter]
    lp.clock.advance(0.5)
    lp.run_due()                                          # PressEnter through handle()
    assert lp.tmux.enters("%1") == 1
    assert lp.sup.deliveries.items["m1"].status is Status.TYPED


def test_a_delivery_due_event_attempts_that_delivery(lp: Loop) -> None:
    lp.watch()
    lp.tmux.screens["%1"] = draft("my own words")
    d = lp.sup.deliveries.queue("%1", "later please")
    assert d is not None and lp.tmux.typed == []
    lp.tmux.screens["%1"] = IDLE                          # the user sent their own words
    lp.clock.advance(15)
    lp.sup.handle(DeliveryDue(d.id))
    assert lp.tmux.typed_into("%1") == ["later please"]


def test_output_marks_the_terminal_to_be_read(lp: Loop) -> None:
    w = lp.watch()
    w.dirty, w.quiet_reported = False, True
    lp.sup.handle(Output("%1", 1234.5))
    assert w.dirty and not w.quiet_reported and w.last_output == 1234.5
    lp.sup.handle(Output("%9", 1.0))                      # not an agent terminal: ignored


def test_a_client_attached_later_has_its_panes_read_without_counting_as_output(
    lp: Loop
) -> None:
    w = lp.watch()
    w.dirty, w.last_output = False, 100.0
    lp.sup.handle(Attached("work", ("%1", "%9")))
    assert w.dirty and w.last_output == 100.0    # read once; its quiet time still counts


def test_tmux_activity_holds_back_a_new_sessions_client(lp: Loop) -> None:
    connected: list[str] = []
    lp.sup.sessions.connect = lambda name: connected.append(name)  # type: ignore[assignment]
    lp.sup._heard(Activity("work"))               # copy mode on somewhere, said by a client
    lp.sup.sync_sessions({"new": 1})
    assert connected == [] and not lp.sup.all_connected()


def test_a_wakeup_reads_the_screen_and_resumes_a_crashed_agent(lp: Loop) -> None:
    w = lp.watch(task="refactor the parser", session_id="s1", incident=Incident(
        1, "refactor the parser", T0 - 5, "process exited", "crashed", phase=Phase.WAITING,
        next_at=T0))
    lp.tmux.panes["%1"] = replace(lp.tmux.panes["%1"], dead=True, dead_status=1)
    lp.tmux.screens["%1"] = "fatal: simulated crash (exit 1)\n\nPane is dead (status 1)"
    lp.sup.handle(Wakeup(w.key))
    assert lp.tmux.respawned == [("%1", ("fakeagent", "--resume", "s1"), "/work/api")]
    assert lp.jobs.job(f"wake:{w.key}") is not None       # it confirms the new process later


def test_an_exit_of_a_process_not_ours_is_ignored(lp: Loop) -> None:
    w = lp.watch(task="refactor the parser")
    lp.sup.handle(ProcessGone(w.key, 999))
    assert w.state.task == "refactor the parser" and lp.jobs.jobs == []


def test_an_agent_that_crashed_mid_task_gets_a_wake_up(lp: Loop) -> None:
    w = lp.watch(task="refactor the parser")
    lp.tmux.panes["%1"] = replace(lp.tmux.panes["%1"], dead=True, dead_status=1)
    lp.tmux.screens["%1"] = "fatal: simulated crash (exit 1)\n\nPane is dead (status 1)"
    lp.sup.handle(ProcessGone(w.key, AGENT_PID))
    job = lp.jobs.job(f"wake:{w.key}")
    assert job is not None and job.when == T0 + 5
    assert w.agent_pid is None


def test_a_report_from_a_part_reaches_the_core(lp: Loop) -> None:
    w = lp.watch(task="refactor the parser", incident=Incident(
        1, "refactor the parser", T0 - 5, "process exited", "crashed", phase=Phase.WAITING,
        next_at=T0 + 20))
    lp.sup.handle(Report("test:%9", Superseded("not ours")))   # a pane gone since: ignored
    lp.sup.handle(Report(w.key, Superseded("the agent was started again by hand")))
    assert w.state.incident is None
    [row] = lp.ledger()
    assert row["badge"] == "Skipped" and "started again by hand" in str(row["reason"])


def test_a_diagnosis_done_is_a_ledger_row(lp: Loop) -> None:
    w = lp.watch()
    diagnosis = Diagnosis(Classification(ScreenState.RATE_LIMIT, "limit"), "codex", 3.0, (), True)
    lp.sup.handle(DiagnosisDone(w.key, "delivery", diagnosis, failures=8))
    [row] = lp.ledger()
    assert row["badge"] == "Diagnosed" and row["reason"] == "codex says rate_limit in 3.0s"
    [msg] = lp.gate.messages                              # not in a seat: you are told
    assert msg.title == 'Messages to "Fake Agent" are not getting through'


def test_a_command_changes_state_json(lp: Loop) -> None:
    lp.sup.handle(CommandArrived(ChangeState(paused=True)))
    assert lp.sup.book.paused
    saved = json.loads(lp.sup.app.paths.state_file.read_text())
    assert saved["paused"] is True


def test_a_queued_delivery_survives_in_state_json(lp: Loop) -> None:
    lp.watch()
    lp.sup.handle(CommandArrived(Send("%1", "run the tests", id="m1")))
    saved = json.loads(lp.sup.app.paths.state_file.read_text())
    [entry] = saved["extra"]["deliveries"]
    assert entry["id"] == "m1" and entry["status"] == "typed"


def test_shutdown_presses_the_enter_still_pending(lp: Loop) -> None:
    lp.watch()
    lp.sup.handle(CommandArrived(Send("%1", "run the tests")))
    lp.sup.effects.flush()                                # what shutdown() does first
    assert lp.tmux.enters("%1") == 1


def test_spooled_numbers_are_read_leniently() -> None:
    assert loop._int(3) == 3 and loop._int(-1) is None and loop._int("3") is None
    assert housekeeping._float(2) == 2.0 and housekeeping._float(2.5) == 2.5
    assert housekeeping._float(None) == 0.0


def test_the_exit_watcher_can_be_joined_after_it_stops() -> None:
    """Was a bug (adapters/exits.py, which the loop starts and stops): `ExitWatcher.__init__` sets
    `self._stop = threading.Event()`, hiding `threading.Thread._stop()`; `Thread.join()` (and
    CPython's after-fork cleanup) call `self._stop()`, so joining the watcher raises
    `TypeError: 'Event' object is not callable`. Renaming the event (`_stopping`) fixes it."""
    watcher = ExitWatcher(lambda event: None)
    watcher.start()
    watcher.stop()
    watcher.join(timeout=5)
