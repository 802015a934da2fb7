"""The one reader: capture, classify, remember on the terminal, and whether the agent runs."""

from __future__ import annotations

from pitcrew.supervisor.core.screen import ScreenState
from tests.service.fakes import (
    AGENT_PID,
    LIMIT,
    FakeClock,
    Processes,
    RecordingTmux,
    busy,
    draft,
    make_reader,
    make_watched,
)

S = ScreenState


def test_a_reading_classifies_the_screen_and_is_remembered() -> None:
    tmux, clock = RecordingTmux(), FakeClock()
    tmux.add("%1", screen=busy("refactor the parser"))
    w = make_watched()
    reading = make_reader(tmux, clock).read(w)
    assert reading.screen is not None and reading.screen.state is S.BUSY
    assert reading.alive and reading.text == busy("refactor the parser")
    assert (w.screen, w.last_text, w.last_read, w.last_alive) == (
        reading.screen, reading.text, clock.mono(), True)
    assert tmux.calls[-1] == ("capture", ("%1", 0))


def test_the_fake_agents_screens_read_as_a_user_sees_them() -> None:
    tmux, clock = RecordingTmux(), FakeClock()
    reader, w = make_reader(tmux, clock), make_watched()
    for text, state in ((draft("half a thought"), S.DRAFT), (LIMIT, S.RATE_LIMIT)):
        tmux.add("%1", screen=text)
        reading = reader.read(w)
        assert reading.screen is not None and reading.screen.state is state


def test_a_closed_pane_reads_as_gone() -> None:
    tmux = RecordingTmux()
    reading = make_reader(tmux, FakeClock()).read(make_watched())
    assert reading.screen is None and not reading.alive
    assert tmux.captures["%1"] == 0


def test_a_dead_pane_is_read_with_its_history_and_the_agent_is_not_alive() -> None:
    tmux = RecordingTmux()
    tmux.add("%1", screen="fatal: simulated crash (exit 3)\n\nPane is dead (status 3, Mon)",
             dead=True, dead_status=3, height=30)
    reading = make_reader(tmux, FakeClock()).read(make_watched())
    assert tmux.calls[-1] == ("capture", ("%1", 30))       # the last words scrolled up
    assert not reading.alive
    assert reading.screen is not None and reading.screen.state is S.CRASHED


def test_alive_needs_a_known_agent_process_that_still_runs() -> None:
    tmux, clock = RecordingTmux(), FakeClock()
    tmux.add("%1")
    procs = Processes(alive=set())
    reader = make_reader(tmux, clock, procs)
    assert not reader.read(make_watched()).alive           # its pid is gone
    procs.alive.add(AGENT_PID)
    assert reader.read(make_watched()).alive
    assert not reader.read(make_watched(agent_pid=None)).alive   # no agent known


def test_fresh_reuses_a_recent_reading_and_reads_again_after_max_age() -> None:
    tmux, clock = RecordingTmux(), FakeClock()
    tmux.add("%1")
    reader, w = make_reader(tmux, clock), make_watched()
    first = reader.fresh(w, 1.0)
    clock.advance(0.5)
    tmux.screens["%1"] = busy("x")
    remembered = reader.fresh(w, 1.0)
    assert (remembered.screen, remembered.text) == (first.screen, first.text)
    assert tmux.captures["%1"] == 1 and reader.reads == 1
    clock.advance(0.5)
    again = reader.fresh(w, 1.0)
    assert again.screen is not None and again.screen.state is S.BUSY
    assert tmux.captures["%1"] == 2 and reader.reads == 2


def test_a_pane_that_vanishes_between_listing_and_capture_reads_as_gone() -> None:
    class Vanishing(RecordingTmux):
        def capture(self, pane_id: str, history: int = 0) -> str | None:
            super().capture(pane_id, history)
            return None

    tmux = Vanishing()
    tmux.add("%1")
    w = make_watched()
    assert make_reader(tmux, FakeClock()).read(w).screen is None
    assert w.screen is None                                 # nothing remembered
