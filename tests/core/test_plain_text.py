"""Text is text: which characters Pitcrew refuses to type, and how it shows them instead."""

from __future__ import annotations

import pytest

from pitcrew.supervisor.core.plain_text import (
    controls,
    empty_command_line,
    one_line,
    refusal,
    visible,
)


@pytest.mark.parametrize("char", ["\x00", "\x03", "\x04", "\x15", "\x1b", "\x1c", "\x1f",
                                  "\x7f", "\x80", "\x85", "\x9b", "\x9f"])
def test_every_c0_del_and_c1_character_is_refused(char: str) -> None:
    text = f"hello{char}there"
    assert controls(text) == [char]
    why = refusal(text)
    assert why is not None and f"\\x{ord(char):02x}" in why and "\n" not in why
    assert visible(text) == f"hello\\x{ord(char):02x}there"
    assert refusal(visible(text)) is None


def test_ordinary_text_passes_untouched() -> None:
    text = "fix the bug in `a;b` — café ☕ $(whoami) {x} ❯ 100%"
    assert refusal(text) is None and visible(text) == text and controls(text) == []


def test_line_breaks_and_tabs_are_spaces_but_separators_are_not() -> None:
    assert one_line("  run\n\tthe\r\ntests\u2028now  ") == "run the tests now"
    # str.split() would take these for spaces; they are control characters, kept to refuse
    assert controls(one_line("a\x1cb\x85c")) == ["\x1c", "\x85"]


def test_an_escape_sequence_is_shown_whole_and_named_once() -> None:
    assert visible("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert refusal("\x1b[31m\x1b[0m\x04") == (
        "the text holds a control character (\\x1b, \\x04), which a terminal takes as a "
        "key, not text")


@pytest.mark.parametrize(("row", "empty"), [
    ("me@box:~/proj$ ", True), ("$ ", True), ("host% ", True), ("root@x:/# ", True),
    ("❯ ", True), ("(venv) ➜  api git:(main) ", True), ("[me@box api]$ ", True),
    ("me@box:~/proj$ ls", False),
    ("me@box:~/proj$", False), ("no prompt here ", False),
    ("❯                                    12:01:33", True),       # a right-hand prompt
])
def test_an_empty_command_line_is_a_prompt_mark_then_the_cursor(row: str, empty: bool) -> None:
    cursor = len(row) if not row.endswith("12:01:33") else 2
    assert empty_command_line(row, cursor) is empty


def test_text_at_the_cursor_is_typed_text_even_after_a_prompt() -> None:
    assert not empty_command_line("$ echo mine", 2)     # the cursor moved to the line's start


def test_a_dead_programs_frame_right_of_the_cursor_is_not_typed_text() -> None:
    # Claude Code killed at a bash prompt: bash's `$ ` lands on its input box's rule
    assert empty_command_line("$ " + "─" * 118, 2)
    assert empty_command_line("$ ╰──────────╯   ", 2)
    assert empty_command_line("me@box:~/proj$ ▀▀▀▀ ───", 15)
    assert not empty_command_line("$ ──── echo mine", 2)    # text is text, frame or not
    assert not empty_command_line("$ " + "─" * 20, 1)       # no prompt mark before the cursor
