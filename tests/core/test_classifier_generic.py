"""The markers every provider inherits (resources/providers/_common.toml), read on screens of
CLIs the classifier has no provider file for (issue #26)."""

from __future__ import annotations

import datetime as dt

from pitcrew.supervisor.core.classifier import classify
from pitcrew.supervisor.core.screen import ScreenState
from tests.support.screens import registry, rules_for

UTC = dt.UTC
NOW = dt.datetime(2026, 11, 30, 14, 0, tzinfo=UTC)


def state(text: str) -> ScreenState:
    return classify(text, registry().generic_screen, NOW, UTC).state


def test_a_permission_request_naming_a_command_is_a_picker() -> None:
    screen = ("│ Shell Command\n│\n│ $ make test\n│\n│ Allow command?\n│\n"
              "│  ❯ Yes (y)\n│    No, and keep going (n)\n")
    assert state(screen) is ScreenState.PICKER


def test_a_question_the_agent_quotes_about_allowing_is_not_a_picker() -> None:
    screen = "● The docs ask: should we allow commands from CI to run here? I think so.\n> \n"
    assert state(screen) is not ScreenState.PICKER


RULE = "─" * 40
JS_CRASH = ("TypeError: Cannot read properties of undefined (reading 'map')\n"
            "    at render (file:///app/cli.js:48:13)\n"
            "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n")


def claude(text: str) -> ScreenState:
    return classify(text, rules_for("claude"), NOW, UTC).state


def test_a_crash_dump_below_the_old_input_box_is_a_crash() -> None:
    assert claude(f"● Updating.\n{RULE}\n❯ \n{RULE}\n  ? for shortcuts\n{JS_CRASH}") is (
        ScreenState.CRASHED)


def test_a_stack_trace_above_a_live_input_box_is_transcript() -> None:
    assert claude(f"● The test fails with:\n{JS_CRASH}\n{RULE}\n❯ \n{RULE}\n") is (
        ScreenState.IDLE)


def test_a_rust_panic_below_the_prompt_of_a_cli_without_a_provider_file_is_a_crash() -> None:
    screen = ("( O)> fix it\n\nDone.\n\n( O)> \n"
              "thread 'main' panicked at src/tui.rs:812:9:\nindex out of bounds\n")
    assert state(screen) is ScreenState.CRASHED


def test_the_agents_own_numbered_question_is_a_question() -> None:
    screen = ("● Two ways to fix it.\n\n  Which approach should I take?\n\n"
              "› 1. Retry with backoff\n  2. Mock the server\n\n  Press enter to select\n")
    assert state(screen) is ScreenState.QUESTION


def test_a_boxed_question_card_is_a_question() -> None:
    screen = ("╭────────────────────────╮\n│ ? Which license?       │\n│                        │\n"
              "│ ● 1. MIT               │\n│   2. Apache-2.0        │\n│ (Use Enter to select)  │\n"
              "╰────────────────────────╯\n")
    assert state(screen) is ScreenState.QUESTION


def test_a_numbered_menu_asking_to_run_a_command_stays_a_picker() -> None:
    screen = ("  Run `npm run migrate`?\n\n› 1. Yes, just this once\n  2. No\n\n"
              "  Press enter to select\n")
    assert state(screen) is ScreenState.PICKER


def test_a_menu_without_a_question_header_stays_a_picker() -> None:
    screen = "  Choose a theme\n\n› 1. Dark\n  2. Light\n\n  Press enter to select\n"
    assert state(screen) is ScreenState.PICKER


def test_a_spinner_with_a_multi_word_task_and_a_timer_is_busy() -> None:
    assert state("◐ Measuring the coverage of the parser… (1m 23s)\n") is ScreenState.BUSY
    assert state("◐ Measuring the coverage of the parser…\n") is not ScreenState.BUSY


def test_a_bare_prompt_at_the_bottom_is_idle_but_a_shell_prompt_is_not() -> None:
    assert state("( O)> add tests\n\nAdded 6 tests.\n\n( O)> \n") is ScreenState.IDLE
    assert state("Added 6 tests.\nuser@host:~/proj$ \n") is ScreenState.EXITED
