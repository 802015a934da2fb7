"""The tmux control-mode watcher: output events, coalesced without losing a burst's end."""

from __future__ import annotations

import queue

import pytest

from pitcrew.supervisor.adapters.control import ControlClient, Output, Throttle
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until


def test_throttle_sends_the_first_event_at_once_and_the_last_when_its_window_closes() -> None:
    t = Throttle(0.25)
    assert t.offer("%1", 10.0)
    assert not t.offer("%1", 10.05)
    assert not t.offer("%1", 10.10)
    assert t.offer("%2", 10.10)            # another pane has its own window
    assert t.wait(10.10) == pytest.approx(0.15)
    assert t.due(10.2) == []
    assert t.due(10.25) == [("%1", 10.10)]  # the burst's last output, when it happened
    assert t.wait(10.25) is None            # nothing pending: block until tmux says something
    assert not t.offer("%1", 10.3)
    assert t.flush() == [("%1", 10.3)]      # the client stopping still reports it
    assert t.due(100.0) == [] and t.wait(100.0) is None   # idle panes cost nothing


def test_output_right_after_output_is_reported_after_the_window(tmux: TmuxServer) -> None:
    """Typing a prompt and the CLI answering within the coalescing window used to leave the
    supervisor with only the first event: it read the typed draft and never the answer."""
    pane = tmux.start("exec cat")
    events: queue.Queue[object] = queue.Queue()
    client = ControlClient(tmux.tmux, tmux.pane(pane).session_name, events.put, coalesce=0.5)
    assert client.start_client()
    try:
        wait_until(lambda: tmux.tmux.capture(pane) is not None)
        tmux.type(pane, "first", enter=False)
        first = _next_output(events, pane)
        tmux.type(pane, "", enter=True)          # cat echoes the line: a second burst
        second = _next_output(events, pane)
        assert second.at > first.at
        tmux.wait_for_text(pane, "first\nfirst")
    finally:
        client.stop()


def _next_output(events: queue.Queue[object], pane: str) -> Output:
    while True:
        event = events.get(timeout=10)
        if isinstance(event, Output) and event.pane_id == pane:
            return event
