"""The needs-you part (service/needs_you.py) over fakes: attention per terminal, what tmux
says you are looking at, and the notifications offered to the gate."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pitcrew.supervisor.core.records import Incident, Phase
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.service.needs_you import NeedsYou
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.config import Config
from tests.service.fakes import FakeClock, FakeGate, make_watched

QUESTION = "Allow this command? OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz012345 1. Yes"


@dataclass(frozen=True)
class Client:
    pane_id: str
    activity: int
    control: bool = False


class Rig:
    def __init__(self, **config: object) -> None:
        self.clock = FakeClock()
        self.gate = FakeGate()
        self.watched: dict[str, Watched] = {}
        self.clients: list[Client] = []
        self.changes = 0
        self.config = Config(**config)  # type: ignore[arg-type]
        self.part = NeedsYou(self.clock, self.watched, self.gate, lambda: self.config,
                             lambda: self.clients, changed=self.count)

    def count(self) -> None:
        self.changes += 1

    def add(self, pane_id: str, state: ScreenState, evidence: str = "",
            cwd: str = "/work/api") -> Watched:
        w = make_watched(pane_id, cwd=cwd)
        w.screen = Classification(state, evidence)
        self.watched[w.key] = w
        return w

    def run_for(self, seconds: float) -> None:
        for _ in range(int(seconds)):
            self.part.run()
            self.clock.advance(1.0)

    def look_at(self, pane_id: str, control: bool = False) -> None:
        self.clients = [Client(pane_id, int(self.clock.wall()), control)]


def test_one_notification_after_the_grace_period_naming_agent_folder_and_question() -> None:
    rig = Rig()
    rig.add("%1", ScreenState.QUESTION, QUESTION)
    rig.run_for(15)
    assert rig.gate.messages == []
    rig.run_for(60)
    [msg] = rig.gate.messages
    assert msg.title == "Fake Agent needs you"
    assert msg.body.startswith("in api: asks a question — Allow this command?")
    assert "sk-abc" not in msg.body and "[redacted]" in msg.body
    assert msg.terminal == "test:%1"
    assert rig.part.of("test:%1") is not None
    assert rig.part.of("test:%1").attention == "needs_you"  # type: ignore[union-attr]


def test_none_while_you_look_at_the_pane() -> None:
    rig = Rig()
    rig.add("%1", ScreenState.QUESTION, QUESTION)
    for _ in range(60):
        rig.look_at("%1")
        rig.run_for(1)
    assert rig.gate.messages == []


def test_pitcrews_own_control_clients_and_idle_clients_do_not_count_as_looking() -> None:
    rig = Rig()
    rig.add("%1", ScreenState.QUESTION)
    rig.look_at("%1", control=True)
    rig.run_for(30)
    assert len(rig.gate.messages) == 1
    rig2 = Rig()
    rig2.add("%1", ScreenState.QUESTION)
    rig2.clients = [Client("%1", int(rig2.clock.wall()) - 3600)]
    rig2.run_for(30)
    assert len(rig2.gate.messages) == 1


def test_a_burst_is_one_notification() -> None:
    rig = Rig()
    rig.add("%1", ScreenState.QUESTION)
    rig.add("%2", ScreenState.PICKER, cwd="/work/web")
    rig.add("%3", ScreenState.BUSY)
    rig.run_for(60)
    [msg] = rig.gate.messages
    assert msg.title == "2 agents need you"
    assert msg.body == "Fake Agent in api; Fake Agent in web"
    assert msg.terminal is None


def test_autopilots_own_notification_is_the_only_one() -> None:
    rig = Rig()
    w = rig.add("%1", ScreenState.LOGIN_REQUIRED)
    inc = Incident(number=1, prompt="fix it", trigger="crash", reason="login",
                   opened_at=0.0, phase=Phase.HOLD, hold="login")
    w.state = dataclasses.replace(w.state, incident=inc)
    rig.run_for(60)
    assert rig.gate.messages == []
    assert rig.part.of(w.key).told  # type: ignore[union-attr]


def test_task_finished_is_a_setting_off_by_default() -> None:
    for on, expected in ((False, []), (True, ["Fake Agent finished its task"])):
        rig = Rig(task_finished=on)
        w = rig.add("%1", ScreenState.BUSY)
        rig.run_for(3)
        w.screen = Classification(ScreenState.IDLE)
        rig.run_for(40)
        assert rig.gate.titles == expected
        assert rig.part.of(w.key).attention == "done"  # type: ignore[union-attr]


def test_needs_you_can_be_turned_off_and_the_grace_is_a_setting() -> None:
    rig = Rig(needs_you=False)
    rig.add("%1", ScreenState.QUESTION)
    rig.run_for(60)
    assert rig.gate.messages == []
    quick = Rig(needs_you_after=2.0)
    quick.add("%1", ScreenState.QUESTION)
    quick.run_for(7)
    assert len(quick.gate.messages) == 1


def test_looking_turns_done_into_idle_and_a_gone_terminal_is_forgotten() -> None:
    rig = Rig()
    w = rig.add("%1", ScreenState.BUSY)
    rig.run_for(2)
    w.screen = Classification(ScreenState.IDLE)
    rig.run_for(2)
    assert rig.part.of(w.key).attention == "done"  # type: ignore[union-attr]
    rig.look_at("%1")
    rig.run_for(2)
    assert rig.part.of(w.key).attention == "idle"  # type: ignore[union-attr]
    assert rig.changes == 2                    # working → done → idle (a first one is not)
    del rig.watched[w.key]
    rig.run_for(2)
    assert rig.part.of(w.key) is None


def test_tmux_not_answering_means_nobody_looks() -> None:
    rig = Rig()
    rig.add("%1", ScreenState.QUESTION)

    def broken() -> list[Client]:
        raise OSError("no tmux")

    rig.part.clients = broken
    rig.run_for(30)
    assert len(rig.gate.messages) == 1


def test_an_idle_or_stopped_fleet_asks_tmux_nothing_a_need_does() -> None:
    rig = Rig()
    asked: list[float] = []

    def clients() -> list[Client]:
        asked.append(rig.clock.wall())
        return rig.clients

    rig.part.clients = clients
    w = rig.add("%1", ScreenState.IDLE)
    rig.add("%2", ScreenState.IDLE)
    rig.run_for(5)
    assert asked == []                         # whether you look changes nothing here
    w.screen = Classification(ScreenState.QUESTION, QUESTION)
    rig.run_for(3)
    assert len(asked) == 3                     # a need: is its pane in front of you?
