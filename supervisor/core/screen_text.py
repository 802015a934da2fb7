"""Reading a pane's text as the classifier sees it: from the bottom, without escapes, bounded.

Only the bottom of a screen tells its state, so the text is cut into lines from its end and
only as many lines are cleaned as the classifier reads (a 5,000-line scrollback costs about
what a 40-line screen does). tmux's "Pane is dead" footer is taken off and reported apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LINES = 400          # a visible screen is never taller; the rest is scrollback
MAX_LINE_CHARS = 600     # bounds regex work on pathological lines

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PANE_DEAD = re.compile(r"Pane is dead( \((status|signal) \d+, [^)]*\))?\s*$")
_FENCE = re.compile(r"^\s*(?:[│┃|]\s*)?(?:```|~~~)")
_DIFF = re.compile(r"^\s*(?:[│┃|⎿]\s*)?(?:\d+\s*)?[+\-](?=\s|$)(?!\s*[+\-]{2})")


@dataclass(frozen=True, slots=True)
class Screen:
    """The bottom of a pane: `lines` (clean, trailing blank lines and the dead-pane footer
    taken off), `footer` (tmux's "Pane is dead …" line, if the pane ended with one) and `top`,
    the row of `lines[0]` counted from the top of the text (to place tmux's cursor)."""

    lines: list[str]
    footer: str | None
    top: int


def _clean(line: str) -> str:
    line = line[: MAX_LINE_CHARS * 4]
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if not line.isprintable():
        line = _CONTROL.sub("", line)
    return line[:MAX_LINE_CHARS].rstrip()


def _raw_lines_from_end(text: str, stop_nonblank: int) -> tuple[list[str], int]:
    """The last raw lines of `text` (as `splitlines` cuts them, in screen order), from the
    `stop_nonblank`-th non-blank line counted from the bottom (at most MAX_LINES lines); and
    the row of the first of them counted from the top of `text`. Only the bottom is split: a
    chunk of the text's end, widened until it holds enough lines."""
    tail = text[-MAX_LINES * (MAX_LINE_CHARS + 1):]
    want = stop_nonblank * 2 + 16
    while True:
        cut = len(tail)
        for _ in range(want):
            cut = tail.rfind("\n", 0, cut)
            if cut < 0:
                break
        start = cut + 1 if cut >= 0 else 0    # right after a newline: never inside "\r\n"
        lines = tail[start:].splitlines()
        first, nonblank = 0, 0
        for k in range(len(lines) - 1, -1, -1):
            if lines[k].strip():
                nonblank += 1
                if nonblank >= stop_nonblank:
                    first = k
                    break
        if cut < 0 or nonblank >= stop_nonblank or len(lines) >= MAX_LINES:
            break
        want *= 4
    first = max(first, len(lines) - MAX_LINES)
    top = text.count("\n", 0, len(text) - len(tail) + start) + first
    return lines[first:], top


def read_screen(text: str, need: int = MAX_LINES) -> Screen:
    """The bottom `need` non-blank lines of `text` and everything between them (at most
    MAX_LINES lines), cleaned; `need=MAX_LINES` reads the whole bounded screen."""
    raw, above = _raw_lines_from_end(text, need + 2)   # +2: a footer and its blank line
    lines = [_clean(line) if line else line for line in raw]
    footer = None
    while lines and (not lines[-1].strip() or _PANE_DEAD.search(lines[-1])):
        last = lines.pop()
        m = _PANE_DEAD.search(last)
        if m and footer is None:
            footer = m.group(0).strip()
            if last[: m.start()].strip():   # tmux wrote it onto the end of the last line
                lines.append(last[: m.start()].rstrip())
                break
    return Screen(lines, footer, above)


def visible_lines(text: str) -> list[str]:
    """The screen's lines as the classifier reads them: no escapes, no tmux footer, bounded."""
    return read_screen(text).lines


_CODE_START = frozenset("`~│┃|⎿+-0123456789")


def code_mask(lines: list[str]) -> list[bool]:
    """Lines inside a ``` fence, and diff lines (`+`/`-`, with or without a line number)."""
    mask = []
    fenced = False
    for line in lines:
        head = line.lstrip()[:1]
        if head not in _CODE_START:       # (cheap: neither a fence nor a diff line)
            mask.append(fenced)
            continue
        if _FENCE.match(line):
            fenced = not fenced
            mask.append(True)
            continue
        mask.append(fenced or bool(_DIFF.match(line)))
    return mask
