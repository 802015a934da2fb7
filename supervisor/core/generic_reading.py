"""Readings that hold across CLIs, applied after the provider's markers (issue #26).

Theory of operation. A provider file knows its CLI's chrome; these rules know what any
terminal agent's screen looks like, and correct the marker reading where the layout says more:

* **A crash dump at the bottom.** A stack trace or fatal error printed *below* the CLI's
  input box or idle status line (the lowest line an input or idle reading came from) is the
  process dying, not transcript: `crashed`. (Below a spinner it may be a tool's output.)
  A trace *above* a live input box stays transcript (the agent quoting a test failure).
* **The agent's own question.** A menu whose header is a question ("Which database should the
  cache use?") and that names no permission (allow, run, trust, edit, a tool …) is the agent
  asking about the task: `question`, not the CLI's permission `picker`.
"""

from __future__ import annotations

import re

from pitcrew.supervisor.core.hits import BLOCK_SPAN
from pitcrew.supervisor.core.screen import ScreenState

# the strong words of a process dying (any one), and a stack frame (two of them make a trace)
_FATAL = re.compile(
    r"\bpanicked at\b|^FATAL ERROR\b|traceback \(most recent call last\)|segmentation fault"
    r"|core dumped|^\s*(uncaught|unhandled)\b|^(\w+\.)*\w*(Error|Exception)\b: \S", re.I)
_FRAME = re.compile(
    r"^\s+at (async )?\S.*(:\d+:\d+\)?|\(native\))\s*$|^\s+File \"[^\"]+\", line \d+"
    r"|^\s*\d+: 0x[0-9a-f]+\b")
_HEADER_Q = re.compile(r"^[\s│┃|?☐◆◇●•]*(\S.*\?)[\s│┃|]*$")
_OPTION = re.compile(r"^[\s│┃|]*(?:[❯›>▶→●○◯◉]\s*)?(?:\d+[.)]|\(?[●○◯◉]\)?)\s+\S")
_FRAME_CHARS = " \t│┃|╭╮╰╯─━"
_PERMISSION = re.compile(
    r"\b(allow|permission|proceed|approve|trust|run|execute|command|edit|apply|write|delete"
    r"|overwrite|tool|access|sandbox|bash|shell|install|login|sign in|update|upgrade)\w*", re.I)


def crash_tail(lines: list[str], chrome: list[int], ui_bottom: int) -> int | None:
    """The headline of a crash dump drawn below `ui_bottom` (the lowest UI line), or None."""
    below = [i for i in chrome if i > ui_bottom]
    frames = [i for i in below if _FRAME.match(lines[i])]
    fatal = [i for i in below if _FATAL.search(lines[i])]
    if not fatal and len(frames) < 2:
        return None
    return min(fatal + frames)


def own_question(lines: list[str], chrome: list[int], index: int) -> bool:
    """Whether the menu read from row `index` is the agent's own question about the task:
    a question header just above its options, and no permission named in the dialog."""
    span = [i for i in chrome if index - BLOCK_SPAN <= i]
    options = [i for i in span if _OPTION.match(lines[i])]
    if len(options) < 2:
        return False
    first = options[-1]          # the top of the lowest run of options (a description line
    for i in reversed(options[:-1]):      # or two may sit between options)
        if first - i > 3:
            break
        first = i
    if first == options[-1]:
        return False
    header = next((i for i in reversed(span) if i < first and lines[i].strip(_FRAME_CHARS)),
                  None)
    if header is None or first - header > 3 or not _HEADER_Q.match(lines[header]):
        return False
    return not any(_PERMISSION.search(lines[i]) for i in span if i >= header)


def read(state: ScreenState, index: int, lines: list[str], chrome: list[int],
         ui_bottom: int | None) -> tuple[ScreenState, int, str] | None:
    """A generic reading that overrides the markers' (`state` from row `index`), with why."""
    if ui_bottom is not None and state is not ScreenState.CRASHED:
        crash = crash_tail(lines, chrome, ui_bottom)
        if crash is not None and crash > index:
            return ScreenState.CRASHED, crash, "a crash dump below the CLI's input box or status"
    if state is ScreenState.PICKER and own_question(lines, chrome, index):
        return ScreenState.QUESTION, index, "a menu under a question that names no permission"
    return None
