"""service/housekeeping.py, in the Supervisor over the fakes (the `lp` fixture): commands
queued by `pitcrew send` while no supervisor ran reach the pane (too old ones do not), and a
busy screen that keeps changing is read at most once per READ_EVERY, and the loop rests
only while nothing counts time."""

from __future__ import annotations

import logging

import pytest

from pitcrew.supervisor.service.housekeeping import READ_EVERY
from pitcrew.supervisor.store import spool
from tests.service.fakes import T0, Loop, busy


def test_queued_commands_are_applied_and_stale_ones_skipped_at_a_first_start(
        lp: Loop, caplog: pytest.LogCaptureFixture) -> None:
    lp.watch()
    path = lp.sup.app.paths.data_dir / "commands.jsonl"
    spool.append(path, {"at": T0 - 7200, "send": {"terminal": "%1", "text": "old news"}})
    spool.append(path, {"at": T0 - 60, "reboot": True})
    spool.append(path, {"at": T0 - 60, "send": {"terminal": "%1", "text": "run the tests"}})
    with caplog.at_level(logging.WARNING, "pitcrew"):
        lp.sup.housekeeper.run()
    assert lp.tmux.typed_into("%1") == ["run the tests"]
    assert "ignoring a queued command Pitcrew does not know: ['at', 'reboot']" in caplog.text
    lp.sup.housekeeper.run()                              # read once: nothing typed again
    assert lp.tmux.typed_into("%1") == ["run the tests"]


def test_a_busy_screen_that_keeps_changing_is_read_at_most_once_per_read_every(
        lp: Loop) -> None:
    w = lp.watch(task="refactor the parser")
    lp.tmux.screens["%1"] = busy("refactor the parser")
    w.dirty = True
    lp.sup.housekeeper.run()
    reads = lp.tmux.captures["%1"]
    assert reads >= 1 and not w.dirty
    w.dirty = True                                        # more output, at once
    lp.clock.advance(READ_EVERY / 2)
    lp.sup.housekeeper.run()
    assert lp.tmux.captures["%1"] == reads and w.dirty
    lp.clock.advance(READ_EVERY / 2)
    lp.sup.housekeeper.run()
    assert lp.tmux.captures["%1"] > reads and not w.dirty


def test_the_loop_rests_only_while_nothing_counts_time(lp: Loop) -> None:
    """An idle fleet is looked at once a second, not four times (issue 24 item 3); a task, a
    screen to read, a message typed, an incident or a session without its client each bring
    the quick passes back."""
    w = lp.watch()
    w.dirty = False
    lp.sup.sessions.listed = {"work": 0.0}
    assert not lp.sup.housekeeper.resting()               # its session waits for a client
    lp.sup.sessions.controls = {"work": _Client()}
    assert lp.sup.housekeeper.resting()
    w.dirty = True                                        # it printed: read it soon
    assert not lp.sup.housekeeper.resting()
    w.dirty = False
    w.delivered_at = lp.clock.mono()                      # typed, not started yet
    assert not lp.sup.housekeeper.resting()
    w.delivered_at = None
    lp.sup.housekeeper.run()
    assert lp.sup.housekeeper.rested                      # what the loop's wait looks at
    lp.watch("%2", task="refactor the parser").dirty = False
    assert not lp.sup.housekeeper.resting()
    lp.sup.housekeeper.run()
    assert not lp.sup.housekeeper.rested


class _Client:
    def stop(self) -> None:
        pass
