"""The classifier's rules on small screens, and its invariants on any text."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from pitcrew.supervisor.core.classifier import MAX_LINES, classify, explain, visible_lines
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


# -- issue #12's five blind spots, one small screen each ----------------------------------

CLAUDE_BOX = "─" * 40 + "\n❯ {}\n" + "─" * 40 + "\n  ? for shortcuts\n"


def test_an_old_error_above_a_newer_prompt_is_history_the_agent_is_idle() -> None:
    screen = ("❯ fix the parser\n  ⎿  API Error: Connection error. · Retrying in 5s\n"
              "❯ try again\n● Done: the parser is fixed.\n" + CLAUDE_BOX.format(""))
    assert state(screen, "claude") is ScreenState.IDLE


def test_a_startup_network_banner_above_an_empty_box_with_no_prompt_sent_is_idle() -> None:
    screen = ("✻ Welcome to Fake Agent\n⚠ settings failed to load (network error)\n"
              "tips: type a message\n" + "─" * 30 + "\nfake> \n")
    assert state(screen) is ScreenState.IDLE


def test_the_current_turns_error_above_an_empty_box_still_counts() -> None:
    screen = "❯ fix the parser\n  ⎿  API Error: Connection error.\n" + CLAUDE_BOX.format("")
    assert state(screen, "claude") is ScreenState.CONNECTION_LOST


def test_a_recovery_hint_in_the_input_box_is_not_a_draft() -> None:
    screen = ("❯ fix the parser\n  ⎿  API Error: 429 rate_limit_error · Rate limited\n"
              + CLAUDE_BOX.format("Resend your message to try again"))
    assert state(screen, "claude") is ScreenState.RATE_LIMIT


def test_tmuxs_cursor_tells_a_hint_from_typed_text() -> None:
    screen = CLAUDE_BOX.format('Try "refactor the parser"')
    row = 1   # the input line
    hint = classify(screen, rules_for("claude"), NOW, UTC, cursor=(2, row))
    typed = classify(screen, rules_for("claude"), NOW, UTC, cursor=(27, row))
    elsewhere = classify(screen, rules_for("claude"), NOW, UTC, cursor=(0, 3))
    assert hint.state is ScreenState.IDLE
    assert typed.state is ScreenState.DRAFT
    assert elsewhere.state is ScreenState.IDLE   # not on the input line: the hint rule decides


def test_a_permission_menu_with_options_is_a_picker_and_a_typed_yes_no_a_question() -> None:
    menu = ("Allow execution of: 'rm'?\n● 1. Allow once\n  2. Allow for this session\n"
            "  3. No (esc)\n")
    assert state(menu) is ScreenState.PICKER
    assert state("Delete 3 files? [y/N]\n") is ScreenState.QUESTION


def test_an_api_error_printed_as_a_json_object_is_read() -> None:
    screen = ('✕ [API Error: [{\n    "error": {\n      "code": 429,\n'
              '      "message": "Resource has been exhausted (e.g. check quota).",\n'
              '      "status": "RESOURCE_EXHAUSTED"\n    }\n  }\n  ]]\n')
    assert state(screen, "gemini") is ScreenState.RATE_LIMIT
    expired = ('● API Error: 401\n  {"type":"error","error":{"type":"authentication_error",\n'
               '  "message":"OAuth token has expired."}}\n')
    assert state(expired, "claude") is ScreenState.LOGIN_REQUIRED


def test_an_excerpt_without_chrome_is_read_from_its_last_lines() -> None:
    trace = ("Error: PluginProvider is missing\n    at sa (/$bunfs/root/chunk-1.js:2593:2804)\n"
             "    at Uc (/$bunfs/root/chunk-2.js:4:248)\n")
    assert state(trace) is ScreenState.CRASHED
    notice = "Update available 1.2 → 1.3\nRun npm install -g fake-agent to update\n"
    assert state(notice) is ScreenState.UPGRADE_PROMPT
    assert state("just some words\n") is ScreenState.UNKNOWN


def test_explain_names_the_rule_and_the_row() -> None:
    why = explain("hello\n⎿ Usage limit reached for fake-1 · resets 3pm\n", FAKE, NOW, UTC)
    assert why.result.state is ScreenState.RATE_LIMIT
    assert [(f.row, f.state) for f in why.fired] == [(2, "rate_limit")]
    assert why.steps[-1].startswith("decided rate_limit from row 2")
    assert why.decided == 2 and why.won(why.fired[0])


def test_explain_says_which_evidence_won_and_which_lost() -> None:
    screen = ("⎿ API Error: 429 rate limit exceeded · Retrying in 5 seconds…\n"
              "● Fixed the quota check.\n✻ Working… (3s · esc to interrupt)\n")
    why = explain(screen, rules_for("claude"), NOW, UTC)
    assert why.result.state is ScreenState.RATE_LIMIT
    won = [f.row for f in why.fired if why.won(f)]
    lost = {f.row: why.lost_why(f) for f in why.fired if not why.won(f)}
    assert won == [1]
    assert lost == {3: "outranked by rate_limit on row 1"}
    text = why.render()
    assert text.index("won (row") < text.index("lost (row") < text.index("steps:")


def test_explain_of_a_shell_prompt_says_no_marker_won() -> None:
    why = explain("● Done.\nuser@host:~/proj$ \n", rules_for("claude"), NOW, UTC)
    assert why.result.state is ScreenState.EXITED
    assert "won: no marker (the layout decided; see steps)" in why.render()


def test_a_minimal_provider_reads_turns_from_the_cursor_row() -> None:
    """No `turn` and no `input` in the provider file: the prompt glyph on tmux's cursor row
    marks the prompts sent before it, so a limit line above a newer prompt is history."""
    import re

    from pitcrew.supervisor.core.rules import ScreenRules

    def pats(*p: str) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(x, re.IGNORECASE) for x in p)

    toy = ScreenRules(markers={ScreenState.BUSY: pats("esc to interrupt"),
                               ScreenState.IDLE: pats(r"^▸\s*$"),
                               ScreenState.RATE_LIMIT: pats("quota exhausted")})
    limited = ("─ toy-small │ ready ─\n▸ quota 14:16\n» quota 14:16\n"
               "✖ Quota exhausted for toy-small. Try again at 14:16.\n─ toy-small │ ready ─\n▸ ")
    answered = limited + ("Continue from where you stopped\n» Continue from where you stopped\n"
                          "◇ done: Continue from where you stopped\n─ toy-small │ ready ─\n▸ ")
    def at_cursor(text: str) -> ScreenState:
        return classify(text, toy, NOW, UTC, cursor=(2, text.count("\n"))).state

    assert at_cursor(limited) is ScreenState.RATE_LIMIT
    assert at_cursor(answered) is ScreenState.IDLE
    assert classify(answered, toy, NOW, UTC).state is ScreenState.RATE_LIMIT   # no cursor known
