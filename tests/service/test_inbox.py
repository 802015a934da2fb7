"""Commands and hook reports reaching the supervisor, applied over fakes: a click and a CLI call
do the same thing, and a hook report becomes the core's observation."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from pitcrew.supervisor.api.commands import (
    Bind,
    ChangeState,
    ConsentAsked,
    Rerun,
    ResumeNow,
    Send,
    SetAutopilot,
    SetSetting,
    parse,
)
from pitcrew.supervisor.core.delivery import Status
from pitcrew.supervisor.core.records import (
    Incident,
    Phase,
    PromptSubmitted,
    TaskFinished,
)
from pitcrew.supervisor.core.settings import Mode
from pitcrew.supervisor.service.autopilot import AutopilotService
from pitcrew.supervisor.service.inbox import Inbox
from pitcrew.supervisor.service.reruns import Reruns
from pitcrew.supervisor.service.seats import SeatBook
from pitcrew.supervisor.service.settings import Settings
from pitcrew.supervisor.service.statebook import StateBook
from pitcrew.supervisor.service.watched import OWN_TYPING_WINDOW
from pitcrew.supervisor.store.config import load_config
from pitcrew.supervisor.store.state_store import Snapshot
from tests.service.fakes import SERVER, T0, Counted, Fed, Rig, registry

SEATS = """\
[[seats]]
name = "api"
cwd = "/work/api"
primary = "fakeagent"
backups = ["fakebackup"]
"""


@dataclass
class Box:
    rig: Rig
    settings: Settings
    book: StateBook
    autopilot: AutopilotService
    seats: SeatBook
    inbox: Inbox
    changed: Counted
    queued: list[tuple[str, str]]


@pytest.fixture
def box(tmp_path: Path) -> Box:
    rig = Rig()
    config_path = tmp_path / "config.toml"
    config_path.write_text(SEATS, encoding="utf-8")
    settings = Settings(config_path, load_config(config_path).config)
    book = StateBook(tmp_path / "state.json", Snapshot(),
                     lambda: {k: w.state for k, w in rig.watched.items()})
    changed = Counted()
    seats = SeatBook(lambda: settings.current().seats, registry(), rig.tmux, rig.clock,
                     rig.ledger, rig.gate, book.save, lambda key, text: None,
                     rig.effects.look_again, is_installed=lambda p: True)
    autopilot = AutopilotService(rig.clock, rig.effects, book.save, changed, settings.current,
                                 lambda: book.paused, seats.has_backup, rig.policy,
                                 off_for_launch=False)
    book.parts["seats"] = seats.to_json
    queued: list[tuple[str, str]] = []
    reruns = Reruns(rig.watched, rig.tmux, rig.clock, rig.ledger, book.save, rig.relauncher,
                    lambda key, text: queued.append((key, text)), lambda w: True,
                    lambda w, why: None, lambda pane: None)
    inbox = Inbox(rig.watched, lambda: SERVER, rig.clock, settings, book, autopilot,
                  rig.deliveries, seats, reruns, changed)
    return Box(rig, settings, book, autopilot, seats, inbox, changed, queued)


def test_autopilot_on_turns_it_on_grants_consent_and_clears_a_pause(box: Box) -> None:
    box.book.change(paused=True)
    box.inbox.apply(SetAutopilot("on"))
    assert box.settings.current().autopilot is True
    assert box.book.consent and not box.book.paused
    assert box.autopilot.mode() is Mode.ON
    assert box.changed.calls >= 1


def test_autopilot_on_over_a_config_it_cannot_write_changes_nothing(box: Box) -> None:
    """Like `pitcrew autopilot on`, which refuses: no consent, no pause cleared, no file."""
    broken = "[autopilot]\nenabled = fals\n"
    box.settings.path.write_text(broken, encoding="utf-8")
    box.book.change(paused=True)
    box.inbox.apply(SetAutopilot("on"))
    assert box.settings.path.read_text(encoding="utf-8") == broken
    assert not box.book.consent and box.book.paused


def test_autopilot_off_clears_a_pause_and_keeps_consent(box: Box) -> None:
    box.inbox.apply(SetAutopilot("on"))
    box.inbox.apply(SetAutopilot("pause"))
    assert box.autopilot.mode() is Mode.PAUSED
    box.inbox.apply(SetAutopilot("off"))
    assert box.autopilot.mode() is Mode.OFF
    assert not box.book.paused and box.book.consent


def test_pause_then_resume_acts_again_on_an_incident_held_by_the_pause(box: Box) -> None:
    w = box.rig.terminal()
    box.inbox.apply(SetAutopilot("on"))
    box.inbox.apply(SetAutopilot("pause"))
    w.state = replace(w.state, task="fix it", incident=Incident(
        1, "fix it", T0, "process exited", "crashed", phase=Phase.HOLD, hold="paused"))
    box.inbox.apply(SetAutopilot("resume"))
    assert box.autopilot.mode() is Mode.ON
    job = box.rig.scheduler.job("wake:test:%1")
    assert job is not None and job.when == T0                 # acted on again, now


def test_change_state_sets_pause_and_consent(box: Box) -> None:
    box.inbox.apply(ChangeState(paused=True, consent=True))
    assert box.book.paused and box.book.consent
    box.inbox.apply(ChangeState(consent=False))
    assert box.book.paused and not box.book.consent


def test_consent_asked_is_remembered(box: Box) -> None:
    box.inbox.apply(ConsentAsked())
    assert box.book.consent_asked


def test_send_queues_a_delivery_that_is_typed_into_the_pane(box: Box) -> None:
    box.rig.terminal()
    box.inbox.apply(Send("%1", "run the tests", id="req-1"))
    box.inbox.apply(Send("%1", "run the tests", id="req-1"))   # the spool replayed it
    assert box.rig.deliveries.items["req-1"].status is Status.TYPED
    assert box.rig.tmux.typed_into("%1") == ["run the tests"]


def test_a_spooled_send_record_does_the_same_as_a_click(box: Box) -> None:
    box.rig.terminal()
    command = parse(Send("work:%1", "hello", id="x").to_record())
    assert command is not None
    box.inbox.apply(command)
    assert box.rig.tmux.typed_into("%1") == ["hello"]


def test_bind_resolves_a_pane_id_to_the_terminal_key(box: Box) -> None:
    w = box.rig.terminal()
    box.inbox.apply(Bind("api", "%1"))
    assert box.seats.terminals == {"test:%1": "api"}
    assert box.seats.seated(w) and box.seats.has_backup(w)
    assert box.book.extra("seats") == {"holders": {}, "terminals": {"test:%1": "api"}}


def test_set_setting_goes_through_the_ui_whitelist(box: Box) -> None:
    box.inbox.apply(SetSetting("diagnosis", "mode", "timer"))
    box.inbox.apply(SetSetting("autopilot", "quiet_after", 1))   # not a UI setting
    assert box.settings.current().diagnosis_mode == "timer"
    assert box.settings.current().quiet_after == 180.0


def test_resume_now_acts_on_a_waiting_incident(box: Box) -> None:
    w = box.rig.terminal()
    box.inbox.apply(SetAutopilot("on"))
    w.state = replace(w.state, task="fix it", incident=Incident(
        1, "fix it", T0, "process exited", "crashed", phase=Phase.HOLD, hold="login",
        attempts=3))
    box.inbox.apply(ResumeNow("%1"))
    job = box.rig.scheduler.job("wake:test:%1")
    assert job is not None and job.when == T0
    assert w.state.incident is not None and w.state.incident.attempts == 0


def test_a_spooled_rerun_by_pane_id_reruns_that_terminal(box: Box) -> None:
    w = box.rig.terminal()
    w.state = replace(w.state, task="fix it")
    command = parse(Rerun("%1").to_record())
    assert command == Rerun("%1")
    box.inbox.apply(command)
    [window] = box.rig.tmux.windows
    assert box.queued == [(f"{SERVER}:{window['pane']}", "fix it")]


def test_a_rerun_of_an_unknown_terminal_does_nothing(box: Box) -> None:
    box.inbox.apply(Rerun("%9"))
    assert box.rig.tmux.windows == [] and box.queued == []


def test_resume_now_for_an_unknown_terminal_does_nothing(box: Box) -> None:
    box.inbox.apply(ResumeNow("%9"))
    assert box.rig.scheduler.jobs == []


# -- hooks ---------------------------------------------------------------------------------------


def test_a_users_prompt_hook_becomes_a_prompt_and_pins_the_session(box: Box) -> None:
    w = box.rig.terminal()
    fed = Fed()
    box.inbox.apply_hook({"pane": "%1", "event": "UserPromptSubmit", "prompt": "fix the bug",
                          "session_id": "s-42"}, fed)
    assert fed.items == [("test:%1", PromptSubmitted("fix the bug", by_pitcrew=False,
                                                     session_id="s-42"))]
    assert w.state.session_id == "s-42"


def test_a_prompt_hook_for_text_pitcrew_just_typed_is_pitcrews_own(box: Box) -> None:
    w = box.rig.terminal()
    box.rig.effects.type_line(w, "continue", "continue")
    w.typed_at, w.typed_text = box.rig.clock.mono(), "continue"
    fed = Fed()
    box.inbox.apply_hook({"pane": "%1", "event": "UserPromptSubmit", "prompt": "continue"}, fed)
    assert fed.observations == [PromptSubmitted("continue", by_pitcrew=True)]
    box.rig.clock.advance(OWN_TYPING_WINDOW + 1)
    box.inbox.apply_hook({"pane": "%1", "event": "UserPromptSubmit", "prompt": "continue"}, fed)
    assert fed.observations[-1] == PromptSubmitted("continue", by_pitcrew=False)


def test_a_prompt_hook_confirms_a_message_pitcrew_typed(box: Box) -> None:
    box.rig.terminal()
    box.inbox.apply(Send("%1", "run the tests", id="m"))
    box.inbox.apply_hook({"pane": "%1", "event": "UserPromptSubmit",
                          "prompt": "run the tests"}, Fed())
    assert box.rig.deliveries.items["m"].status is Status.DELIVERED


def test_a_stop_hook_finishes_a_running_task_only(box: Box) -> None:
    w = box.rig.terminal()
    fed = Fed()
    box.inbox.apply_hook({"pane": "%1", "event": "Stop"}, fed)
    assert fed.items == []                                   # nothing was running
    w.state = replace(w.state, task="fix the bug")
    box.inbox.apply_hook({"pane": "%1", "event": "Stop", "session_id": "s-1"}, fed)
    assert fed.observations == [TaskFinished(session_id="s-1")]


def test_a_hook_from_an_unwatched_pane_is_ignored(box: Box) -> None:
    fed = Fed()
    box.inbox.apply_hook({"pane": "%9", "event": "UserPromptSubmit", "prompt": "x"}, fed)
    box.inbox.apply_hook({"event": "Stop"}, fed)
    assert fed.items == []


def test_reload_settings_tells_the_ui_and_acts_on_a_mode_change(box: Box, tmp_path: Path) -> None:
    import os

    box.book.change(consent=True)
    path = tmp_path / "config.toml"
    path.write_text(SEATS + "\n[autopilot]\nenabled = true\n", encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    calls = box.changed.calls
    box.inbox.reload_settings()
    assert box.autopilot.mode() is Mode.ON
    assert box.changed.calls == calls + 1
