"""A usage limit end to end (SPEC §4, §7): the real `pitcrew watch`, a real tmux server, the
fake agent showing a limit right after the user's prompt. A limit is handled the moment it
shows, and a reset time that has just come is now — not tomorrow at the same time.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.e2e.test_autopilot_e2e import start_agent, wait_badges, watch
from tests.support.tmux_server import TmuxServer

pytestmark = pytest.mark.e2e


def clock(at: dt.datetime) -> str:
    """`2:01pm`, as Claude Code prints a reset."""
    return f"{at.hour % 12 or 12}:{at.minute:02d}{'am' if at.hour < 12 else 'pm'}"


def test_a_limit_whose_reset_just_came_is_acted_on_at_once_not_tomorrow(
        tmux: TmuxServer, pitcrew_home: Path, fake_provider_installed: Path,
        tmp_path: Path) -> None:
    """The idle timeout is the default 180 s (18 s at this test's time scale): the limit
    must not wait for it."""
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\n")
    now = dt.datetime.now().astimezone()
    reset = now - dt.timedelta(minutes=1)
    if reset.date() != now.date():
        pytest.skip("a minute after midnight: 'one minute ago' is yesterday's clock time")
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        typed_at = dt.datetime.now().timestamp()
        tmux.type(pane, f"limit resets {clock(reset)}")
        scheduled, continued = wait_badges(pitcrew_home, "Scheduled", "Continued",
                                           timeout=40)
    finally:
        w.stop()
    assert scheduled.at - typed_at < 8, "handled when it showed, not after the idle timeout"
    assert scheduled.trigger == "usage limit"
    assert scheduled.readings["wake_at"] - scheduled.at < 30     # not 24 hours
    resets = dt.datetime.fromisoformat(scheduled.readings["reset_at"])
    assert resets.astimezone().replace(second=0, microsecond=0) == \
        reset.replace(second=0, microsecond=0)
    assert continued.prompt == f"limit resets {clock(reset)}"
