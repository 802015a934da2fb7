"""The fakes behave like the adapters they stand for, where the service layer relies on it."""

from __future__ import annotations

import datetime as dt

from pitcrew.supervisor.adapters.scheduler import JobScheduler
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.service.events import Wakeup
from tests.service.fakes import (
    BANNER,
    CONTINUE,
    IDLE,
    LIMIT,
    LOGIN,
    PERMISSION_MENU,
    T0,
    FakeClock,
    FakeScheduler,
    RecordingTmux,
    busy,
    draft,
    idle_after,
    make_reader,
    make_watched,
)

S = ScreenState


def test_a_job_with_the_key_of_a_pending_one_replaces_it() -> None:
    jobs = FakeScheduler()
    jobs.at(T0 + 10, Wakeup("a"), key="wake:a")
    jobs.at(T0 + 5, Wakeup("b"))
    jobs.at(T0 + 5, Wakeup("b"))                           # no key: both kept
    jobs.at(T0 + 20, Wakeup("a2"), key="wake:a")
    assert jobs.due(T0 + 10) == [Wakeup("b"), Wakeup("b")]
    assert jobs.due(T0 + 30) == [Wakeup("a2")]
    assert jobs.jobs == []


def test_it_stands_in_for_apscheduler_under_the_real_job_scheduler() -> None:
    jobs = FakeScheduler()
    JobScheduler(jobs, print).at(T0 + 3, Wakeup("a"), key="wake:a")
    [job] = jobs.jobs
    assert (job.when, job.event, job.key) == (T0 + 3, Wakeup("a"), "wake:a")


def test_the_clock_moves_only_when_told() -> None:
    clock = FakeClock()
    clock.advance(2.5)
    assert (clock.wall(), clock.mono()) == (T0 + 2.5, 1002.5)
    assert clock.datetime() == dt.datetime.fromtimestamp(T0 + 2.5, dt.UTC)


def test_the_fake_agents_screens_classify_as_named() -> None:
    tmux, clock = RecordingTmux(), FakeClock()
    reader, w = make_reader(tmux, clock), make_watched()
    for text, state in ((IDLE, S.IDLE), (idle_after("x"), S.IDLE), (busy("x"), S.BUSY),
                        (draft("x"), S.DRAFT), (PERMISSION_MENU, S.PICKER), (LIMIT, S.RATE_LIMIT),
                        (LOGIN, S.LOGIN_REQUIRED), (CONTINUE, S.CONTINUE_PROMPT),
                        (BANNER, S.UNKNOWN)):
        tmux.add("%1", screen=text)
        reading = reader.read(w)
        assert reading.screen is not None and reading.screen.state is state, text
