"""The local screen classifier: pane text + a provider's screen rules → one state.

Theory of operation
-------------------
A pane shows two things: the transcript (what the agent wrote, including code and diffs that
may say "429 Too Many Requests") and the CLI's own chrome (spinner/status line, dialogs, the
input box and the few lines just above it). Only the chrome of the *current turn* tells the
state, so:

1. Only the bottom of the screen is read (`screen_text`): the last `chrome_lines` non-blank
   lines are the chrome; a 5,000-line scrollback costs what a screen does. Patterns are
   pre-built once per rules object and skip lines that lack their literal text (`patterns`).
2. Lines that look like code (a ``` fence, diff lines) and lines the provider declares as
   transcript never count as evidence for a limit, a connection error, a crash or a continue
   prompt — except the body of the CLI's own error (the lines under an "API Error"/"Error:"
   head, e.g. a JSON error object).
3. The current turn counts: a blocking message above the newest echo of a submitted prompt is
   history; a stack trace above a live input box is transcript; a background notice (the
   provider's `banners`: a startup check or update fetch that failed) is never a connection
   error or crash of the agent.
4. A busy indicator means the agent is working. Error text above it is history, except a
   "retrying" line at or just above the topmost busy line (the CLI reporting its own retries);
   anything drawn below the busy lines (a dialog) wins over busy.
5. Without a busy indicator, the newest (lowest) blocking message decides. A menu defers to a
   limit, login, upgrade or continue notice just above it that explains it (a limit menu is
   `rate_limit`), a picker to the question it answers, a crash report to a limit or login it
   names (holds a restart cannot fix).
6. tmux's "Pane is dead" footer, or a shell prompt on the last line, means the agent is gone.
   Its own goodbye (the provider's `goodbye`: a resume hint it prints on a normal exit) below
   the line it was started from, and below anything that failed, is `exited`; else its last
   words decide: a limit or login is that hold, a failure (a stack trace, a fatal error, the
   shell's `Killed`, a dead pane's non-zero status or signal) is `crashed`. With none of them
   it is `exited`: nothing on screen says it failed, and a shell prompt alone proves nothing.
7. Text the user typed into the input box and did not send is `draft` — unless a dialog is
   drawn below it. Placeholder hints count as an empty box; when tmux's cursor is known
   (`cursor=(x, y)`), text drawn after the cursor on the input line is a hint, not typing.
8. With none of the CLI's chrome on screen (an excerpt), the provider's `fallback` signals in
   the last lines decide (a stack trace, an update notice that asks to act); else `unknown`.

Reset times and retry delays are read from the deciding message first, then its neighbours.
`explain()` returns the same result with the rule that fired on each line and the steps taken.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from pitcrew.supervisor.core import generic_reading as _g
from pitcrew.supervisor.core import screen_steps as _d
from pitcrew.supervisor.core.reset_time import parse_reset
from pitcrew.supervisor.core.rules import ScreenRules
from pitcrew.supervisor.core.screen import BLOCKING_PRIORITY, Classification, ScreenState
from pitcrew.supervisor.core.screen_rules import compiled
from pitcrew.supervisor.core.screen_text import (
    MAX_LINE_CHARS,
    MAX_LINES,
    code_mask,
    read_screen,
    visible_lines,
)
from pitcrew.supervisor.core.screen_trace import Fired, Trace
from pitcrew.supervisor.core.shell_report import shell_signal

__all__ = [
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "Explanation",
    "classify",
    "explain",
    "input_text",
    "newest_turn",
    "said_goodbye",
    "visible_lines",
]

EVIDENCE_CHARS = 240
GOODBYE = "goodbye"    # the `cause` of an `exited` screen that shows the CLI's own goodbye
# the line an agent was started from (or a later command): a shell prompt and a command
_COMMAND_LINE = re.compile(r"^\s*(\(\S+\)\s*)?(\S+@[\w.-]+(:\S*)?\s*)?[$#%] +\S")
# tmux's "Pane is dead (status 1, …)" or "(signal 9, …)": it did not end well
_FAILED_FOOTER = re.compile(r"\((status [1-9]\d*|signal \d+)\b")
_WITH_RESET = frozenset(
    {ScreenState.RATE_LIMIT, ScreenState.CONNECTION_LOST, ScreenState.CONTINUE_PROMPT,
     ScreenState.BUSY, ScreenState.LOGIN_REQUIRED}
)


@dataclass(frozen=True, slots=True)
class Explanation:
    """`classify`'s answer, the rules that fired on which lines, and the steps it took.
    `decided` is the row (1-based) whose reading decided the state, when one did: the rules
    that fired there for that state won, every other one lost (`lost_why` says to what)."""

    result: Classification
    fired: tuple[Fired, ...] = ()
    steps: tuple[str, ...] = ()
    decided: int | None = None

    def won(self, f: Fired) -> bool:
        return f.row == self.decided and f.state == self.result.state.value

    def lost_why(self, f: Fired) -> str:
        if f.note:
            return f.note
        if f.state == self.result.state.value:
            return "agrees, but another line decided"
        where = f" on row {self.decided}" if self.decided is not None else ""
        return f"outranked by {self.result.state.value}{where}"

    def render(self) -> str:
        out = [f"state: {self.result.state.value}"]
        if self.result.evidence:
            out.append(f"evidence: {self.result.evidence}")
        won = [f for f in self.fired if self.won(f)]
        lost = [f for f in self.fired if not self.won(f)]
        if won:
            out.append("won (row, state, pattern, line):")
            out.extend(f"  {f.row:4}  {f.state:16} {f.pattern!r}\n        {f.text!r}"
                       for f in won)
        else:
            decided = f" from row {self.decided}" if self.decided is not None else ""
            out.append(f"won: no marker{decided} (the layout decided; see steps)")
        if lost:
            out.append("lost (row, state, pattern, line, why):")
            out.extend(f"  {f.row:4}  {f.state:16} {f.pattern!r}\n        {f.text!r}"
                       f"   [{self.lost_why(f)}]" for f in lost)
        out.append("steps:")
        out.extend(f"  - {s}" for s in self.steps)
        return "\n".join(out)


def classify(
    text: str, rules: ScreenRules, now: dt.datetime, local: dt.tzinfo,
    cursor: tuple[int, int] | None = None,
) -> Classification:
    """Classify one screen. Never raises on any text. `cursor` is tmux's (cursor_x, cursor_y)
    for the pane the text was captured from, when known."""
    return _run(text, rules, now, local, cursor, None)


def explain(
    text: str, rules: ScreenRules, now: dt.datetime, local: dt.tzinfo,
    cursor: tuple[int, int] | None = None,
) -> Explanation:
    """`classify`, and which rule fired on which line and why the state won."""
    trace = Trace()
    result = _run(text, rules, now, local, cursor, trace)
    return Explanation(result, tuple(trace.fired), tuple(trace.steps), trace.decided)


def _run(
    text: str, rules: ScreenRules, now: dt.datetime, local: dt.tzinfo,
    cursor: tuple[int, int] | None, trace: Trace | None,
) -> Classification:
    c = compiled(rules)
    screen = read_screen(text, c.chrome_lines * 3)
    lines = screen.lines
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    chrome = nonblank[-c.chrome_lines:]
    if not chrome:
        if screen.footer:
            _d.step(trace, "empty screen with tmux's dead-pane footer: crashed")
            return Classification(ScreenState.CRASHED, screen.footer)
        _d.step(trace, "nothing on screen: unknown")
        return Classification(ScreenState.UNKNOWN)
    cursor_row = cursor[1] - screen.top if cursor is not None else None
    r = _d.Read(lines, code_mask(lines), chrome, nonblank, c, trace, screen.top,
                cursor_row, cursor[0] if cursor is not None else None)
    hits = _d.scan(r)
    if screen.footer or _d.shell_back(lines, chrome):
        _d.step(trace, "tmux's dead-pane footer" if screen.footer
                else "a shell prompt is back on the last line: the agent is gone")
        state, index = _d.gone(r, hits, screen.footer)
        bye = goodbye_line(r)
        if bye is not None and bye > index:
            _d.step(trace, f"the CLI's goodbye on row {r.row(bye)}: it exited normally")
            _d.decided(r, bye)
            return Classification(ScreenState.EXITED, lines[bye].strip()[:EVIDENCE_CHARS],
                                  cause=GOODBYE)
        if index < 0 and shell_signal(tuple(lines[i] for i in chrome)) is not None:
            _d.step(trace, "the shell reports its program killed by a signal")
            _d.decided(r, chrome[-1])
            return Classification(ScreenState.CRASHED, lines[chrome[-1]].strip())
        if index < 0:
            failed = screen.footer is not None and _FAILED_FOOTER.search(screen.footer)
            _d.step(trace, "tmux's dead-pane footer names a failure" if failed
                    else "no goodbye and no failure on screen: exited, how is not known")
            return Classification(ScreenState.CRASHED if failed else ScreenState.EXITED,
                                  screen.footer or lines[chrome[-1]].strip())
        return _finish((state, index), r, now, local)
    input_at = _d.input_line(r)
    hits = _d.current_turn(r, hits, input_at)
    decided = _d.decide(r, hits, input_at)
    calm = [h.index for h in hits if h.state is ScreenState.IDLE]
    ui_bottom = max([*calm, input_at] if input_at is not None else calm, default=None)
    generic = _g.read(decided[0], decided[1], lines, chrome, ui_bottom)
    if generic is not None:
        state, index, why = generic
        _d.step(trace, why)
        if trace is not None:
            trace.fired.append(Fired(r.row(index), state.value, f"generic: {why}",
                                     lines[index].strip()[:160]))
        decided = (state, index)
    if decided[0] is ScreenState.UNKNOWN:
        decided = _d.fallback(r)
    return _finish(decided, r, now, local)


def goodbye_line(r: _d.Read) -> int | None:
    """The lowest line of the CLI's own goodbye among the last lines, below the shell line it
    was started from (a goodbye above that line is an earlier run's), or None."""
    if not r.c.goodbye:
        return None
    for i in reversed(r.chrome):
        if _COMMAND_LINE.match(r.lines[i]):
            return None
        if r.c.goodbye.search(r.lines[i], r.fold(i)):
            return i
    return None


def said_goodbye(text: str, rules: ScreenRules) -> str:
    """The CLI's goodbye among the last lines of a screen it left (its process is known to be
    gone: the shell's prompt may be one the classifier does not know), or ""."""
    c = compiled(rules)
    if not c.goodbye:
        return ""
    lines = read_screen(text, c.chrome_lines * 3).lines
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    r = _d.Read(lines, code_mask(lines), nonblank[-c.chrome_lines:], nonblank, c, None, 0,
                None, None)
    i = goodbye_line(r)
    return lines[i].strip()[:EVIDENCE_CHARS] if i is not None else ""


def newest_turn(text: str, rules: ScreenRules) -> str:
    """The newest submitted prompt echoed on screen (not the input box itself), or "". An
    echo shaped like the provider's input line is what its `text` group holds (the CLI's own
    glyph, `zorp ❯ `, is no part of the prompt); else the turn line less a common marker."""
    c = compiled(rules)
    if not c.turn:
        return ""
    lines = read_screen(text, c.chrome_lines * 3).lines
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    chrome = nonblank[-c.chrome_lines * 3:]
    r = _d.Read(lines, code_mask(lines), chrome, nonblank, c, None, 0, None, None)
    input_at = _d.input_line(r)
    for i in reversed(chrome):
        if i == input_at:
            continue
        m = c.turn.search(lines[i], r.fold(i))
        if m:
            said = next((t for rx in c.input if (e := rx.search(lines[i])) is not None
                         and (t := (e.group("text") or "").strip())), "")
            if said:
                return said[:200]
            return _d.TURN_MARKER.sub("", lines[i][m.start():], count=1).strip()[:200]
    return ""


def input_text(text: str, rules: ScreenRules, cursor: tuple[int, int] | None = None) -> str:
    """What the input box holds ("" when empty or showing only a placeholder hint)."""
    c = compiled(rules)
    screen = read_screen(text, c.chrome_lines * 3)
    lines = screen.lines
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    r = _d.Read(lines, code_mask(lines), nonblank[-c.chrome_lines:], nonblank, c, None,
                screen.top, cursor[1] - screen.top if cursor else None,
                cursor[0] if cursor else None)
    i = _d.draft_line(r, _d.input_line(r))
    return _d.typed(r, i) if i is not None else ""


def _finish(
    decided: tuple[ScreenState, int], r: _d.Read, now: dt.datetime, local: dt.tzinfo,
) -> Classification:
    state, index = decided
    lines = r.lines
    _d.decided(r, index)
    if index < 0:
        _d.step(r.trace, f"decided {state.value}")
        return Classification(state)
    if state is ScreenState.CRASHED:
        while index > 0 and _d.STACK_FRAME.match(lines[index]):
            index -= 1  # a stack trace's headline is the line above its frames
    width = max(len(line) for line in lines)
    for _ in range(_d.MESSAGE_LINES if state in BLOCKING_PRIORITY else 0):
        above = lines[index - 1].rstrip() if index > 0 else ""  # a message hard-wrapped at
        wrapped = len(above) >= _d.WRAP_FILL * width            # the pane's edge: show its
        if wrapped and not above.endswith(_d.SENTENCE_END) and _d.CONTINUATION.match(
                lines[index]):
            index -= 1                                          # first line
    _d.step(r.trace, f"decided {state.value} from row {r.top + index + 1}")
    evidence = lines[index].strip()[:EVIDENCE_CHARS]
    message = [lines[index]]
    for line in lines[index + 1: index + 1 + _d.MESSAGE_LINES]:
        if not line.strip() or _d.NEW_MESSAGE.match(line):
            break
        message.append(line)
    near = lines[max(0, index - 2): index + 6]
    window = "\n".join(near)
    folded = window.casefold()
    cause = next((name for name, ps in r.c.causes if ps.search(window, folded)), None)
    if state not in _WITH_RESET:
        return Classification(state, evidence, cause=cause)
    info = parse_reset(" ".join(message), now, local)  # the deciding message first: the newest
    if state is ScreenState.BUSY:
        return Classification(state, evidence, info.reset_at, info.retry_after, cause)
    if info.reset_at is None and info.retry_after is None:
        info = parse_reset(window, now, local)
    if info.reset_at is None and info.retry_after is None:
        # a hard-wrapped message can split a word ("try a" / "gain at 8:41 AM")
        info = parse_reset("".join(line.strip() for line in near), now, local)
    return Classification(state, evidence, info.reset_at, info.retry_after, cause)
