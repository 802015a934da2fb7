"""A watched terminal's own readings: its timeline, and whether a prompt was Pitcrew's."""

from __future__ import annotations

from pitcrew.supervisor.api.view import TIMELINE_SECONDS
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.service.watched import (
    OWN_TYPING_WINDOW,
    UNREAD_ECHO_WINDOW,
    is_ready,
    is_working,
    since,
)
from tests.service.fakes import IDLE, T0, busy, make_watched

S = ScreenState


def test_the_timeline_keeps_changes_only() -> None:
    w = make_watched()
    w.note_state("busy", T0)
    w.note_state("busy", T0 + 5)
    w.note_state("idle", T0 + 9)
    assert w.timeline == [(T0, "busy"), (T0 + 9, "idle")]


def test_the_timeline_keeps_six_hours_and_the_segment_running_at_the_horizon() -> None:
    w = make_watched()
    w.note_state("busy", T0)
    w.note_state("idle", T0 + 100)
    w.note_state("busy", T0 + 200)
    w.note_state("idle", T0 + 150 + TIMELINE_SECONDS)
    assert w.timeline == [(T0 + 100, "idle"), (T0 + 200, "busy"),
                          (T0 + 150 + TIMELINE_SECONDS, "idle")]


def test_a_prompt_is_pitcrews_when_it_echoes_what_pitcrew_just_typed() -> None:
    w = make_watched()
    w.typed_at, w.typed_text = 100.0, "continue where you stopped"
    assert w.is_own_prompt("continue where  you stopped", 105.0)
    assert not w.is_own_prompt("fix the tests instead", 105.0)    # the user's own
    assert not w.is_own_prompt("continue where you stopped", 100.0 + OWN_TYPING_WINDOW + 1)


def test_an_unread_echo_counts_as_pitcrews_only_just_after_typing() -> None:
    w = make_watched()
    assert not w.is_own_prompt("", 100.0)                  # Pitcrew typed nothing
    w.typed_at, w.typed_text = 100.0, "continue"
    assert w.is_own_prompt("", 100.0 + UNREAD_ECHO_WINDOW - 1)
    assert not w.is_own_prompt("", 100.0 + UNREAD_ECHO_WINDOW + 1)


def test_prompt_text_is_the_newest_echo_on_screen() -> None:
    w = make_watched()
    assert w.prompt_text(busy("refactor the parser")) == "refactor the parser"
    assert w.prompt_text(IDLE) == ""


def test_working_and_ready() -> None:
    assert is_working(Classification(S.BUSY)) and not is_working(None)
    assert is_ready(Classification(S.IDLE)) and not is_ready(Classification(S.DRAFT))


def test_reading_a_screen_uses_the_providers_rules() -> None:
    import datetime as dt

    w = make_watched()
    now = dt.datetime.fromtimestamp(T0, dt.UTC)
    assert w.read(busy("x"), now, dt.UTC).state is S.BUSY
    assert w.read(IDLE, now, dt.UTC).state is S.IDLE


def test_a_limit_lines_reset_is_read_against_when_the_line_first_appeared() -> None:
    """SPEC §7: shown at 1:59:50 before its 2:01pm reset and read again at 2:02:47, it is
    today's 2:01pm (passed), not tomorrow's; a line that leaves the screen is forgotten."""
    import datetime as dt

    paris = dt.timezone(dt.timedelta(hours=1))
    limit = IDLE.replace("fake> ", "") + \
        "⎿ Usage limit reached for fake-1 · resets 2:01pm\n  /upgrade\nfake> "
    w = make_watched()
    first = dt.datetime(2026, 12, 2, 13, 59, 50, tzinfo=paris)
    today = dt.datetime(2026, 12, 2, 14, 1, tzinfo=paris)
    assert w.read(limit, first, paris).reset_at == today
    later = dt.datetime(2026, 12, 2, 14, 12, 47, tzinfo=paris)
    assert w.read(limit, later, paris).reset_at == today        # not tomorrow's 2:01pm
    w.read(IDLE, later, paris)                                  # the line went away
    assert w.read(limit, later, paris).reset_at == today + dt.timedelta(days=1)


def test_what_a_dead_program_left_under_the_typed_command_reads_as_blank() -> None:
    screen = "old screen\n$ claude --resume s1\n  esc to interrupt\nkept"
    assert since(screen, "claude --resume") == "  esc to interrupt\nkept"
    left = ("  esc to interrupt", "other")
    assert since(screen, "claude --resume", left) == "\nkept"     # unchanged: left over
    drawn = screen.replace("  esc to interrupt", "╭─── Claude Code")
    assert since(drawn, "claude --resume", left) == "╭─── Claude Code\nkept"
