"""Text is text (SPEC §7): what Pitcrew types into a pane never carries a control character.

Typed into a terminal, a control character is a key, not text: `\\x04` on an empty line ends
an agent (and what follows reaches the user's shell, with Pitcrew pressing Enter), `\\x03`
interrupts it, `\\x15` erases the line, ESC starts a sequence that moves the cursor or
rewrites the screen. So every C0 character (ESC and with it every escape sequence), DEL and
every C1 character is refused where text is typed (`adapters/tmux.py`), refused with one line
at `pitcrew send`, and shown as a visible escape (`\\x04`) in text Pitcrew builds from
something it read (a recorded prompt, a brief).

Line breaks and tabs a person typed are whitespace, flattened to single spaces before this
rule is applied (`one_line`): a newline in a message would otherwise submit it early.

Pure: no I/O.
"""

from __future__ import annotations

import re

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# whitespace (line breaks, tabs, Unicode spaces) but not the control characters `\s` also
# matches (`\x1c`–`\x1f`, `\x85`): those are refused, not flattened
SPACE = re.compile("(?:(?![\x1c-\x1f\x85])\\s)+")


def controls(text: str) -> list[str]:
    """The control characters in `text`, each once, in the order they first appear."""
    return list(dict.fromkeys(CONTROL.findall(text)))


def escaped(char: str) -> str:
    """How a control character is shown: `\\x04`, `\\x1b`, `\\x9b`."""
    return f"\\x{ord(char):02x}"


def visible(text: str) -> str:
    """`text` with every control character shown as its escape: safe to type."""
    return CONTROL.sub(lambda m: escaped(m.group()), text)


def one_line(text: str) -> str:
    """Line breaks and tabs (and runs of spaces) as single spaces; other control characters
    are left for `controls` to find (str.split alone would treat `\\x1c`–`\\x1f` and `\\x85`
    as spaces, hiding them)."""
    return SPACE.sub(" ", text).strip(" ")


def refusal(text: str) -> str | None:
    """Why `text` may not be typed (one line), or None when it may."""
    found = controls(text)
    if not found:
        return None
    return ("the text holds a control character (" + ", ".join(map(escaped, found[:5]))
            + "), which a terminal takes as a key, not text")


# how shell prompts end (bash/sh `$ `/`# `, zsh `% `, starship/pure `❯ `, oh-my-zsh's
# `➜  api git:(main) `, `[user@host dir]$ `)
# what a dead full-screen program's frame leaves on a row: box drawing (U+2500–U+257F), block
# elements (U+2580–U+259F) and the few other rules CLIs draw with
FRAME_REMNANT = re.compile("[\u2500-\u259f\u2013\u2014\u2015]+")
PROMPT_MARKS = ("$", "#", "%", ">", "❯", "➜", "→", "»", "λ", "›", "▸", ":", ")", "]")


def empty_command_line(row: str, cursor_x: int) -> bool:
    """Whether the shell's command line on `row` (the cursor's row) is empty: the text before
    the cursor ends with a prompt mark and a space (`user@host:~/dir$ `, `% `, `❯ `,
    `git:(main) `) and no
    text starts at the cursor (a right-hand prompt further right is not typed text). A line
    the user has typed on (`$ ls -la`) is not empty; neither is a prompt this cannot tell,
    so nothing is typed after it (the user is told instead).

    Box-drawing and block characters right of the cursor are what a full-screen program that
    died left on that row, not typed text: a shell draws its prompt over the old screen
    without clearing the rest of the row. Claude Code killed in a pane leaves its input
    box's rule there, and bash's `$ ` lands on it: `$ ────────…` (seen with claude 2.1.197,
    tests/e2e/real/). Nobody types those characters at a shell prompt."""
    before, after = row[:cursor_x], row[cursor_x:]
    return (before.endswith(" ") and before.rstrip().endswith(PROMPT_MARKS)
            and (not after[:1].strip() or not FRAME_REMNANT.sub("", after).strip()))
