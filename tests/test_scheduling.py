"""Retries are APScheduler jobs, and a restart of Pitcrew rebuilds them from state.json."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from apscheduler.schedulers.background import BackgroundScheduler

from pitcrew.supervisor.adapters.notifier import Gate
from pitcrew.supervisor.core.delivery import Status
from pitcrew.supervisor.service.app_context import load_context
from pitcrew.supervisor.service.loop import Supervisor
from tests.support.tmux_server import TmuxServer


def supervisor(tmux: TmuxServer) -> Supervisor:
    sup = Supervisor(load_context(tmux.name), Gate([]), scheduler=BackgroundScheduler())
    sup.rescan()
    return sup


def test_a_delivery_waiting_on_a_draft_is_a_job_and_survives_a_restart(
    tmux: TmuxServer, fake_provider_installed: Path
) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    tmux.type(pane, "my own unsent words", enter=False)     # a draft: never typed over
    tmux.wait_for_text(pane, "my own unsent words")
    first = supervisor(tmux)
    try:
        d = first.deliveries.queue(pane, "run the tests")
        assert d is not None
        d = first.deliveries.items[d.id]
        assert d.status is Status.PENDING and d.attempts == 1
        job = first.aps.get_job(f"delivery:{d.id}")
        assert job is not None
        assert job.trigger.run_date == dt.datetime.fromtimestamp(d.next_at, dt.UTC)
        assert d.next_at - d.created_at >= 14                # every 15 s
    finally:
        first.shutdown()
    second = supervisor(tmux)                                # Pitcrew restarted
    try:
        assert second.aps.get_job(f"delivery:{d.id}") is None
        second.deliveries.restore()                          # what the loop's start does
        job = second.aps.get_job(f"delivery:{d.id}")
        assert job is not None
        assert job.trigger.run_date == dt.datetime.fromtimestamp(d.next_at, dt.UTC)
        assert "run the tests" not in tmux.screen(pane)      # never typed on the draft
    finally:
        second.shutdown()


def test_a_backoff_wake_up_is_a_job_rebuilt_from_state(
    tmux: TmuxServer, fake_provider_installed: Path, pitcrew_home: Path
) -> None:
    import json

    (pitcrew_home / "config.toml").write_text("[autopilot]\nenabled = true\n")
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    key = f"{tmux.name}:{pane}"
    due = 4_000_000_000.0
    (pitcrew_home / "state.json").write_text(json.dumps({
        "version": 1, "consent": False, "paused": False, "extra": {},
        "terminals": {key: {
            "terminal": f"x:{pane}", "agent": "Fake Agent", "project": "/p", "health": "zombie",
            "task": "fix it", "session_id": "s1", "generation": 0, "restarts": [],
            "crashes": [], "incidents_opened": 1,
            "incident": {"number": 1, "prompt": "fix it", "opened_at": 1.0,
                         "trigger": "process exited", "reason": "crashed", "attempts": 1,
                         "phase": "waiting", "next_at": due, "hold": None, "renewals": 0}}}}))
    from pitcrew.supervisor.core.autopilot import restore

    sup = supervisor(tmux)
    try:
        for w in sup.watched.values():
            sup.autopilot.run(w, restore(w.state, sup.clock.wall()))
        job = sup.aps.get_job(f"wake:{key}")
        assert job is not None
        assert job.trigger.run_date == dt.datetime.fromtimestamp(due, dt.UTC)
    finally:
        sup.shutdown()
