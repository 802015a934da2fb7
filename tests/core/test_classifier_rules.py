"""The classifier's rules on small screens, and its invariants on any text."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from pitcrew.supervisor.core.classifier import MAX_LINES, classify, visible_lines
from pitcrew.supervisor.core.screen import ScreenState
from tests.support.screens import registry, rules_for

UTC = dt.UTC
NOW = dt.datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
FAKE = rules_for("fakeagent")


def state(text: str, provider: str = "fakeagent") -> ScreenState:
    return classify(text, rules_for(provider), NOW, UTC).state


def test_a_rate_limit_inside_a_diff_the_agent_prints_is_busy() -> None:
    screen = (
        "● Editing limiter.py\n"
        "  12 -        raise HTTPError('429 Too Many Requests: rate limit exceeded')\n"
        "  12 +        raise RateLimited('usage limit reached', retry_after=30)\n"
        "⠙ Working on \"fix the rate limiter\"… (4s · esc to interrupt)\n"
    )
    assert state(screen) is ScreenState.BUSY


def test_a_rate_limit_inside_a_code_fence_is_not_a_limit() -> None:
    screen = ("```\nprint('429 Too Many Requests')\nraise QuotaExceeded('quota exceeded')\n"
              "```\nfake> \n")
    assert state(screen) is ScreenState.IDLE


def test_a_usage_warning_banner_while_working_is_busy() -> None:
    screen = ("⚠ You've used 75% of your weekly limit · resets Dec 3\n"
              "⠹ Working on \"refactor\"… (40s · esc to interrupt)\n")
    assert state(screen) is ScreenState.BUSY


def test_the_clis_own_retry_line_just_above_the_spinner_wins() -> None:
    screen = ("⠹ Working on \"x\"… (3s · esc to interrupt)\n"
              "  ⎿ API Error (Connection error.) · Retrying in 5 seconds… (attempt 1/10)\n")
    got = classify(screen, FAKE, NOW, UTC)
    assert got.state is ScreenState.CONNECTION_LOST
    assert got.retry_after == 5
    assert got.cause == "network"


def test_a_limit_menu_is_a_rate_limit_not_a_picker() -> None:
    screen = ("⎿ Usage limit reached for fake-1 · resets 5pm (Europe/Paris)\n"
              "What do you want to do?\n ❯ 1. Stop and wait for limit to reset\n"
              "   2. Upgrade your plan\n")
    got = classify(screen, FAKE, NOW, UTC)
    assert got.state is ScreenState.RATE_LIMIT
    assert got.reset_at == dt.datetime(2026, 11, 30, 16, 0, tzinfo=UTC)


def test_an_unsent_draft_beats_the_error_above_it() -> None:
    screen = "⎿ Usage limit reached for fake-1 · resets 3pm\nfake> please also add te"
    assert state(screen) is ScreenState.DRAFT


def test_a_dialog_drawn_below_the_input_box_beats_the_draft() -> None:
    screen = "fake> half typed\nDo you want to proceed?\n ❯ 1. Yes\n   2. No\n"
    assert state(screen) is ScreenState.PICKER   # a numbered permission menu is a picker


def test_an_empty_prompt_is_idle_and_nothing_recognisable_is_unknown() -> None:
    assert state("● Done: work 1\nfake> ") is ScreenState.IDLE
    assert state("lorem ipsum\ndolor sit amet\n") is ScreenState.UNKNOWN
    assert state("") is ScreenState.UNKNOWN
    assert state("\n\n   \n") is ScreenState.UNKNOWN


def test_tmuxs_dead_pane_footer_is_not_screen_text() -> None:
    dead = "fake> \n\nPane is dead (status 3, Mon Nov 30 21:31:37 2026)\n"
    assert visible_lines(dead) == ["fake>"]


def test_evidence_is_the_deciding_line() -> None:
    got = classify("hello\n⎿ Usage limit reached for fake-1 · resets 3pm\n", FAKE, NOW, UTC)
    assert got.evidence == "⎿ Usage limit reached for fake-1 · resets 3pm"


def test_every_shipped_provider_classifies_an_empty_screen_as_unknown() -> None:
    for provider in registry():
        assert classify("", provider.screen, NOW, UTC).state is ScreenState.UNKNOWN


screens = st.lists(st.text(max_size=200), max_size=60).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(screens, st.sampled_from(["fakeagent", "claude", "generic"]))
def test_never_raises_and_evidence_comes_from_the_screen(text: str, provider: str) -> None:
    got = classify(text, rules_for(provider), NOW, UTC)
    assert isinstance(got.state, ScreenState)
    if got.evidence:
        assert got.evidence in "\n".join(visible_lines(text))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(max_size=120), min_size=1, max_size=30), st.integers(0, 200))
def test_work_is_bounded_a_long_scrollback_reads_like_its_tail(tail: list[str], pad: int) -> None:
    """A 5,000-line screen is classified from its visible tail only (so it stays fast)."""
    tail_text = "\n".join(tail)
    junk = "\n".join(f"x{i} ⎿ Usage limit reached · 429 too many" for i in range(5000))
    big = junk + "\n" + "\n" * pad + tail_text
    small_lines = visible_lines(tail_text)
    if len(small_lines) < MAX_LINES and not any(line.strip() for line in small_lines):
        return  # an empty tail lets the junk above it become the visible screen
    assert classify(big, FAKE, NOW, UTC) == classify(
        "\n".join(visible_lines(big)[-MAX_LINES:]), FAKE, NOW, UTC)
    assert len(visible_lines(big)) <= MAX_LINES
