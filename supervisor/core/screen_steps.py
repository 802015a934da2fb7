"""The classifier's steps over one screen: find the rules that fire, the input line and the
current turn, and pick the state (see `classifier` for the theory of operation)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pitcrew.supervisor.core.hits import BLOCK_SPAN, HOLDS, MENUS, Hit, most_urgent, newest
from pitcrew.supervisor.core.screen import BLOCKING_PRIORITY, ScreenState
from pitcrew.supervisor.core.screen_rules import CompiledRules
from pitcrew.supervisor.core.screen_trace import Fired, Trace

RETRY_SPAN = 3           # lines above a spinner that may carry the CLI's own retry notice
MESSAGE_LINES = 4        # lines a hard-wrapped message may span
ERROR_SPAN = 14          # lines an error object (e.g. pretty-printed JSON) may span
WRAP_FILL = 0.8          # a line this full (of the widest line) was wrapped at the pane's edge
SENTENCE_END = (".", "!", "?", ":", "…")
CONTINUATION = re.compile(r"^\s{0,6}[a-z'\"\]\}),.]")
NEW_MESSAGE = re.compile(r"^\s*[⎿■●✗✕✘⚠❯›>╭╰│─•◆✻✶*+-]|^\s*\d+[.)]\s")
TURN_MARKER = re.compile(r"^\s*(?:[>❯›»$%#✨]|\S+>)\s*")
STACK_FRAME = re.compile(r"^\s+at \S|^\s+File \".*\", line \d+")
# The head of the CLI's own error report: the lines under it (a JSON error object) are that
# error's body, not the agent's prose.
_ERROR_HEAD = re.compile(
    r"^\s*(?:[│┃⎿✕✗×■⚠❌]\s*)*(?:\[?API Error\b|Error:|ERROR:|\[ERROR\]|Model call failed)")
_SOFT = frozenset({ScreenState.CONNECTION_LOST, ScreenState.CRASHED})
_NOT_FROM_TRANSCRIPT = frozenset(
    {ScreenState.RATE_LIMIT, ScreenState.CONNECTION_LOST, ScreenState.CRASHED,
     ScreenState.CONTINUE_PROMPT}
)
# A shell prompt on the last line: the agent is gone and its shell is back.
_SHELL_PROMPT = re.compile(r"^\s*(\(\S+\)\s*)?(\S+@[\w.-]+(:.*?)?\s*)?[$#%]\s*$")
_PROMPT_OVER_TUI = re.compile(r"^\s*(\S+@[\w.-]+(:.*?)?\s*)?[$#%]\s*([─━═]{5,}.*)?$")
_KILLED = re.compile(r"^\W*(Killed|Terminated)\s*$")
_RETRYING = re.compile(r"retry(?:ing)?\b|attempt \d+\s*(?:/|of)\s*\d+|reconnecting", re.I)
_NONE: frozenset[ScreenState] = frozenset()


@dataclass(slots=True)
class Read:
    """One screen being classified."""

    lines: list[str]
    code: list[bool]
    chrome: list[int]
    nonblank: list[int]
    c: CompiledRules
    trace: Trace | None
    top: int                  # row of lines[0] from the top of the captured text
    cursor_row: int | None    # tmux's cursor row as an index into `lines`
    cursor_x: int | None
    _folded: dict[int, str] | None = None

    def fold(self, i: int) -> str:
        if self._folded is None:
            self._folded = {}
        found = self._folded.get(i)
        if found is None:
            found = self._folded[i] = self.lines[i].casefold()
        return found

    def row(self, i: int) -> int:
        return self.top + i + 1


def step(trace: Trace | None, message: str) -> None:
    if trace is not None:
        trace.steps.append(message)


def decided(r: Read, i: int) -> None:
    """Record the line whose reading decided the state (for `explain`)."""
    if r.trace is not None and i >= 0 and r.trace.decided is None:
        r.trace.decided = r.row(i)


def _fired(r: Read, i: int, state: ScreenState, pattern: str, note: str = "") -> None:

    if r.trace is not None:
        r.trace.fired.append(Fired(r.row(i), state.value, pattern, r.lines[i].strip()[:160], note))


# -- rules that fire -----------------------------------------------------------------------

def scan(r: Read) -> list[Hit]:
    hits: list[Hit] = []
    prose = _prose_lines(r)
    explaining = r.trace is not None
    for rank, i in enumerate(r.chrome):
        agent = i in prose
        banner: bool | None = None
        skip = _NOT_FROM_TRANSCRIPT if agent and not explaining else _NONE
        for state, m in r.c.scan.states(r.lines[i], r.fold(i), skip):
            if agent and state in _NOT_FROM_TRANSCRIPT:
                _fired(r, i, state, m.re.pattern, "transcript or code: not the CLI's own")
                continue
            if state in _SOFT and banner is None:
                banner = r.c.banners.search(r.lines[i], r.fold(i)) is not None
            if banner and state in _SOFT:
                _fired(r, i, state, m.re.pattern, "a background notice, not the agent's turn")
                continue
            _fired(r, i, state, m.re.pattern)
            hits.append(Hit(i, rank, state))
    return hits


def _prose_lines(r: Read) -> set[int]:
    """Chrome lines that are code, the agent's prose or a prompt's echo — not the CLI's own
    words. The body of an error report the CLI printed (the lines under an "API Error" or
    "Error:" head, e.g. a JSON error object) is the CLI's own, though shaped like prose."""
    prose: set[int] = set()
    if not r.chrome:
        return prose
    first = r.chrome[0]
    head_at: int | None = None
    previous: int | None = None
    for i in r.nonblank:
        if i < first - ERROR_SPAN:
            continue
        if previous is not None and i - previous > 1:
            head_at = None                 # a blank line ends an error report
        previous = i
        line = r.lines[i]
        if r.code[i]:
            prose.add(i)
            continue
        if i < first and not _ERROR_HEAD.match(line):
            if NEW_MESSAGE.match(line):    # above the chrome only an error's head matters,
                head_at = None             # and where another message starts
            continue
        low = r.fold(i)
        agent = r.c.transcript.search(line, low) is not None or (
            r.c.turn.search(line, low) is not None)
        if _ERROR_HEAD.match(line) and (not agent or line.lstrip()[:1] in "●⎿✕"):
            head_at = i
        elif agent and NEW_MESSAGE.match(line):
            head_at = None                 # an agent's bullet starts its own message
            prose.add(i)
        elif agent and (head_at is None or i - head_at >= ERROR_SPAN):
            prose.add(i)
    return prose


def shell_back(lines: list[str], chrome: list[int]) -> bool:
    """The agent is gone and its shell is back: a prompt on the last line, or a prompt just
    under the shell's "Killed" with a dead TUI's stale footer still drawn below it."""
    if _SHELL_PROMPT.match(lines[chrome[-1]]):
        return True
    tail = chrome[-6:]
    return any(_PROMPT_OVER_TUI.match(lines[i]) and k > 0 and _KILLED.match(lines[tail[k - 1]])
               for k, i in enumerate(tail))


def gone(r: Read, hits: list[Hit], footer: str | None) -> tuple[ScreenState, int]:
    """The agent is gone: a crash, unless its last words name a limit or login (a hold)."""
    last_words = [h for h in hits
                  if h.state in BLOCKING_PRIORITY and h.rank >= len(r.chrome) - BLOCK_SPAN]
    held = [h for h in last_words if h.state in HOLDS]
    if held:
        return newest(held)
    if last_words:  # say why it died, in its own words
        return ScreenState.CRASHED, newest(last_words)[1]
    return ScreenState.CRASHED, -1   # no last words: the footer (or last line) says it


# -- the input line and the current turn ---------------------------------------------------

def _input_match(r: Read, i: int) -> re.Match[str] | None:
    for rx in r.c.input:
        m = rx.search(r.lines[i])
        if m is not None:
            return m
    return None


def _framed(r: Read, i: int) -> bool:
    frame = r.c.input_frame
    return frame is None or (i > 0 and frame.search(r.lines[i - 1]) is not None)


def input_line(r: Read) -> int | None:
    """The input box's line. Where tmux's cursor sits on an input-shaped line, that line;
    else the lowest line an `input` pattern matches inside its frame. A prompt with no frame
    is not the input box while a busy line shows below it (then the same shape is the echo of
    the prompt being worked on)."""
    i = r.cursor_row
    if i is not None and i in r.chrome and _framed(r, i) and _input_match(r, i) is not None:
        step(r.trace, f"input line: row {r.row(i)} (tmux's cursor is on it)")
        return i
    busy_below = False
    for i in reversed(r.chrome[-1:] if r.c.input_last else r.chrome):
        if r.c.input_frame is None and busy_below:
            return None
        if r.c.busy.search(r.lines[i], r.fold(i)):
            busy_below = True
        if not _framed(r, i):
            continue
        if _input_match(r, i) is not None:
            step(r.trace, f"input line: row {r.row(i)}")
            return i
    return None


def typed(r: Read, i: int) -> str:
    m = _input_match(r, i)
    return (m.group("text") or "").strip() if m is not None else ""


def draft_line(r: Read, i: int | None) -> int | None:
    """The input line's index when it holds unsent text, else None."""
    if i is None:
        return None
    m = _input_match(r, i)
    text = (m.group("text") or "").strip() if m is not None else ""
    if not text or m is None:
        return None
    if r.cursor_x is not None and r.cursor_row == i:
        start = _width(r.lines[i][: m.start("text")])
        end = start + _width(text)
        if r.cursor_x == start:
            step(r.trace, "tmux's cursor is at the start of the text in the input box: "
                          "the text is a hint drawn after it, the box is empty")
            return None
        if start < r.cursor_x <= end + 1:
            step(r.trace, "tmux's cursor is after the text in the input box: it was typed")
            return i
    if r.c.placeholders.search(text, text.casefold()):
        step(r.trace, "the input box shows a placeholder hint: empty")
        return None
    return i


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _is_echo(r: Read, i: int, input_at: int | None) -> bool:
    """A submitted prompt's echo (a `turn` line other than the input line)."""
    if i == input_at:
        return False
    return r.c.turn.search(r.lines[i], r.fold(i)) is not None


def _cursor_echoes(r: Read) -> list[int]:
    """For a provider file with neither `turn` nor `input`: tmux's cursor sits on the input
    row, and when that row holds only the prompt glyph (`▸`, `>`, `❯`), the rows above it
    that start with the same glyph and some text are prompts sent earlier — the same reading
    the service makes of what was typed. A minimal provider so gets turns too: a limit line
    above the newest of them is history, not the current turn."""
    if r.c.turn or r.c.input or r.cursor_row is None or not 0 <= r.cursor_row < len(r.lines):
        return []
    glyph = r.lines[r.cursor_row].strip()
    if not glyph or len(glyph) > 3 or any(ch.isalnum() for ch in glyph):
        return []
    return [i for i in r.chrome if i < r.cursor_row
            and r.lines[i].lstrip().startswith(glyph + " ")
            and r.lines[i].lstrip()[len(glyph):].strip()]


def current_turn(r: Read, hits: list[Hit], input_at: int | None) -> list[Hit]:
    """Drop what belongs to earlier turns: blocking messages above the newest prompt echo."""
    turns = [i for i in r.chrome if _is_echo(r, i, input_at)] + _cursor_echoes(r)
    if turns:
        start = max(turns)
        kept = [h for h in hits if h.index > start or h.state not in BLOCKING_PRIORITY
                or r.c.overlay.search(r.lines[h.index], r.fold(h.index))]   # toasts: now
        if len(kept) < len(hits):
            step(r.trace, f"the newest prompt is at row {r.row(start)}: "
                          f"{len(hits) - len(kept)} message(s) above it are from earlier turns")
        return kept
    return hits


# -- the state -----------------------------------------------------------------------------

def decide(r: Read, hits: list[Hit], input_at: int | None) -> tuple[ScreenState, int]:
    lines, chrome = r.lines, r.chrome
    if input_at is not None:
        crashes = [h for h in hits if h.state is ScreenState.CRASHED and h.index < input_at]
        if crashes:
            step(r.trace, "a stack trace or crash text above a live input box is transcript")
            hits = [h for h in hits if h not in crashes]
    blocking = [h for h in hits if h.state in BLOCKING_PRIORITY]
    busy = [h.index for h in hits if h.state is ScreenState.BUSY]
    draft_at = draft_line(r, input_at)
    if busy:
        top, bottom = min(busy), max(busy)
        top_rank = min(h.rank for h in hits if h.index == top)
        retry_ranks = [k for k, i in enumerate(chrome)
                       if top_rank - RETRY_SPAN <= k <= top_rank and _RETRYING.search(
                           message(lines, i))]
        over = [
            h for h in blocking
            if h.index > bottom
            or h.index in busy
            or r.c.overlay.search(lines[h.index], r.fold(h.index))
            or any(k - MESSAGE_LINES <= h.rank <= k for k in retry_ranks)
        ]
        if over:
            step(r.trace, "a message at, below or just above the busy line wins over busy")
            return most_urgent(over)
        step(r.trace, f"busy at row {r.row(top)}; messages above it are history")
        return ScreenState.BUSY, top
    running = _turn_running(r, hits, input_at)
    if running is not None:
        step(r.trace, "the newest prompt has output below it and no end-of-turn line: busy")
        return ScreenState.BUSY, running
    if draft_at is not None:
        below = [h for h in blocking if h.index >= draft_at]
        menus = [h for h in blocking if h.state in MENUS]
        if (not below and menus and r.cursor_row is not None
                and r.cursor_row != draft_at and r.chrome[0] <= r.cursor_row < len(r.lines)):
            step(r.trace, "tmux's cursor is in a dialog drawn over the input box, not in it")
            return most_urgent(menus)
        if not below:
            step(r.trace, f"unsent text in the input box at row {r.row(draft_at)}")
            return ScreenState.DRAFT, draft_at
        step(r.trace, "a dialog is drawn below the typed text")
        return most_urgent(below)
    if blocking:
        return most_urgent(blocking)
    idle = [h.index for h in hits if h.state is ScreenState.IDLE]
    if idle:
        return ScreenState.IDLE, max(idle)
    if input_at is not None:
        step(r.trace, "an empty input box and nothing else: idle")
        return ScreenState.IDLE, input_at
    return ScreenState.UNKNOWN, -1


def fallback(r: Read) -> tuple[ScreenState, int]:
    """No chrome on screen: the provider's weaker signals in the last lines decide."""
    found: list[Hit] = []
    for rank, i in enumerate(r.chrome[-BLOCK_SPAN:]):
        if r.code[i]:
            continue
        for state, ps in r.c.fallback:
            m = ps.search(r.lines[i], r.fold(i))
            if m is not None:
                _fired(r, i, state, m.re.pattern, "fallback (no chrome on screen)")
                found.append(Hit(i, rank, state))
    if not found:
        step(r.trace, "no chrome and no fallback signal: unknown")
        return ScreenState.UNKNOWN, -1
    step(r.trace, "no input box, status line or dialog on screen: the last lines' strongest "
                  "signal decides")
    return newest(found)


def message(lines: list[str], index: int) -> str:
    """A line and the lines a hard wrap carried over from it (to read a notice whole)."""
    out = [lines[index]]
    for line in lines[index + 1: index + 1 + MESSAGE_LINES]:
        if not line.strip() or NEW_MESSAGE.match(line):
            break
        out.append(line)
    return " ".join(part.strip() for part in out)


def _turn_running(r: Read, hits: list[Hit], input_at: int | None) -> int | None:
    """For CLIs that show no spinner while they stream: the newest prompt has output below it
    but no end-of-turn line yet (and no notice) — the agent is still answering."""
    c = r.c
    if not c.turn or not (c.turn_end or c.input_last):
        return None
    if c.input_last and input_at is not None:
        return None   # its prompt is back at the bottom: the turn is over
    stop = input_at if input_at is not None else r.chrome[-1] + 1
    echo = next((i for i in reversed(r.chrome) if i < stop and i != input_at
                 and c.turn.search(r.lines[i], r.fold(i))), None)
    if echo is None:
        return None
    after = [i for i in r.chrome if echo < i < stop]
    if not after or any(h.index > echo and h.state in BLOCKING_PRIORITY for h in hits):
        return None
    if any(c.turn_end.search(r.lines[i], r.fold(i)) for i in after):
        return None
    return after[-1]


