"""The local screen classifier: pane text + a provider's screen rules → one state.

Theory of operation
-------------------
A pane shows two things: the transcript (what the agent wrote, including code and diffs that
may say "429 Too Many Requests") and the CLI's own chrome (spinner/status line, dialogs, the
input box and the few lines just above it). Only the chrome tells the state, so:

1. Only the last `chrome_lines` non-blank lines are read (the visible screen's tail), each cut
   to a bounded length; a 5,000-line scrollback costs the same as a screen.
2. Lines that look like code — inside a ``` fence, or diff lines (`+`/`-`, with or without a
   line number) — and lines the provider declares as transcript (`screen.transcript`: the
   agent's prose and tool output) never count as evidence for a limit, a connection error, a
   crash or a continue prompt.
3. A busy indicator (spinner, "esc to interrupt") means the agent is working. Error text above
   it is transcript, except a "retrying" line at or just above the topmost busy line (the CLI
   reporting its own retries); anything drawn below the busy lines (a dialog) wins over busy.
4. Without a busy indicator, the newest (lowest) blocking message decides. A menu (question,
   picker) defers to a limit, login, upgrade or continue notice just above it that explains it
   (a limit menu is `rate_limit`), a picker to the question it answers, and a crash report to
   a limit or login it names (holds that a restart cannot fix).
5. tmux's "Pane is dead" footer, or a shell prompt on the last line, means the agent is gone:
   `crashed` — unless its last words name a limit or login.
6. Text the user typed into the input box and did not send is `draft` — unless a dialog is
   drawn below the input box. Placeholder hints count as an empty box. An empty box is `idle`.
7. Nothing recognised is `unknown`, never a guess.

Reset times and retry delays are read from the deciding message first, then its neighbours.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from pitcrew.supervisor.core.reset_time import parse_reset
from pitcrew.supervisor.core.screen import BLOCKING_PRIORITY, Classification, ScreenState
from pitcrew.supervisor.providers.model import ScreenRules

MAX_LINES = 400          # a visible screen is never taller; the rest is scrollback
MAX_LINE_CHARS = 600     # bounds regex work on pathological lines
BLOCK_SPAN = 8           # lines above the lowest blocking match that belong to the same dialog
RETRY_SPAN = 3           # lines above a spinner that may carry the CLI's own retry notice
EVIDENCE_CHARS = 240

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PANE_DEAD = re.compile(r"Pane is dead( \((status|signal) \d+, [^)]*\))?\s*$")
_FENCE = re.compile(r"^\s*(?:[│┃|]\s*)?(?:```|~~~)")
_DIFF = re.compile(r"^\s*(?:[│┃|⎿]\s*)?(?:\d+\s*)?[+\-](?=\s|$)(?!\s*[+\-]{2})")
MESSAGE_LINES = 4        # lines a hard-wrapped message may span
WRAP_FILL = 0.8          # a line this full (of the widest line) was wrapped at the pane's edge
_SENTENCE_END = (".", "!", "?", ":", "…")
_CONTINUATION = re.compile(r"^\s{0,6}[a-z'\"\]\}),.]")
_NEW_MESSAGE = re.compile(r"^\s*[⎿■●✗✕✘⚠❯›>╭╰│─•◆✻✶*+-]|^\s*\d+[.)]\s")
_TURN_MARKER = re.compile(r"^\s*(?:[>❯›»$%#✨]|\S+>)\s*")
_MENUS = frozenset({ScreenState.QUESTION, ScreenState.PICKER, ScreenState.UPGRADE_PROMPT})
_HOLDS = frozenset({ScreenState.LOGIN_REQUIRED, ScreenState.RATE_LIMIT})
_NOT_FROM_TRANSCRIPT = frozenset(
    {ScreenState.RATE_LIMIT, ScreenState.CONNECTION_LOST, ScreenState.CRASHED,
     ScreenState.CONTINUE_PROMPT}
)
_NOTICES = frozenset({ScreenState.LOGIN_REQUIRED, ScreenState.RATE_LIMIT,
                      ScreenState.UPGRADE_PROMPT, ScreenState.CONTINUE_PROMPT})
_EXPLAINED_BY: dict[ScreenState, frozenset[ScreenState]] = {
    ScreenState.PICKER: _NOTICES | {ScreenState.QUESTION},
    ScreenState.QUESTION: _NOTICES,
    ScreenState.CRASHED: _HOLDS,
}
# A shell prompt on the last line: the agent is gone and its shell is back.
_SHELL_PROMPT = re.compile(r"^\s*(\(\S+\)\s*)?(\S+@[\w.-]+(:.*?)?\s*)?[$#%]\s*$")
_PROMPT_OVER_TUI = re.compile(r"^\s*(\S+@[\w.-]+(:.*?)?\s*)?[$#%]\s*([─━═]{5,}.*)?$")
_KILLED = re.compile(r"^\W*(Killed|Terminated)\s*$")
_STACK_FRAME = re.compile(r"^\s+at \S|^\s+File \".*\", line \d+")
_RETRYING = re.compile(r"retry(?:ing)?\b|attempt \d+\s*(?:/|of)\s*\d+|reconnecting", re.I)
_WITH_RESET = frozenset(
    {ScreenState.RATE_LIMIT, ScreenState.CONNECTION_LOST, ScreenState.CONTINUE_PROMPT,
     ScreenState.BUSY, ScreenState.LOGIN_REQUIRED}
)


@dataclass(frozen=True, slots=True)
class _Hit:
    index: int        # line number on screen
    rank: int         # position among the non-blank chrome lines (spans count these)
    state: ScreenState


def visible_lines(text: str) -> list[str]:
    """The screen's lines as the classifier reads them: no escapes, no tmux footer, bounded."""
    return _visible(text)[0]


def _visible(text: str) -> tuple[list[str], str | None]:
    """(lines, tmux's dead-pane footer if the screen ends with one)."""
    tail = text[-MAX_LINES * (MAX_LINE_CHARS + 1):]
    lines = tail.splitlines()[-MAX_LINES:]
    out = []
    for line in lines:
        line = _CONTROL.sub("", _ANSI.sub("", line[: MAX_LINE_CHARS * 4]))[:MAX_LINE_CHARS]
        out.append(line.rstrip())
    footer = None
    while out and (not out[-1].strip() or _PANE_DEAD.search(out[-1])):
        last = out.pop()
        m = _PANE_DEAD.search(last)
        if m and footer is None:
            footer = m.group(0).strip()
            if last[: m.start()].strip():   # tmux wrote it onto the end of the last line
                out.append(last[: m.start()].rstrip())
                break
    return out, footer


def _code_mask(lines: list[str]) -> list[bool]:
    mask = []
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            mask.append(True)
            continue
        mask.append(fenced or bool(_DIFF.match(line)))
    return mask


def classify(
    text: str, rules: ScreenRules, now: dt.datetime, local: dt.tzinfo
) -> Classification:
    """Classify one screen. Never raises on any text; reads at most `chrome_lines` lines."""
    lines, dead_footer = _visible(text)
    chrome = [i for i, line in enumerate(lines) if line.strip()][-rules.chrome_lines:]
    if not chrome:
        if dead_footer:
            return Classification(ScreenState.CRASHED, dead_footer)
        return Classification(ScreenState.UNKNOWN)
    code = _code_mask(lines)
    hits: list[_Hit] = []
    for rank, i in enumerate(chrome):
        prose = (code[i] or any(rx.search(lines[i]) for rx in rules.transcript)
                 or any(rx.search(lines[i]) for rx in rules.turn))   # a prompt's own echo
        for state, patterns in rules.markers.items():
            if prose and state in _NOT_FROM_TRANSCRIPT:
                continue
            if any(p.search(lines[i]) for p in patterns):
                hits.append(_Hit(i, rank, state))
    if dead_footer or _shell_back(lines, chrome):
        return _gone(hits, lines, chrome, dead_footer, rules, now, local)
    hits = _drop_earlier_turns(hits, lines, chrome, rules)
    decided = _decide(lines, chrome, hits, rules)
    return _finish(decided, lines, rules, now, local)


def _gone(
    hits: list[_Hit], lines: list[str], chrome: list[int], footer: str | None,
    rules: ScreenRules, now: dt.datetime, local: dt.tzinfo,
) -> Classification:
    """The agent is gone: a crash, unless its last words name a limit or login (a hold)."""
    last_words = [h for h in hits
                  if h.state in BLOCKING_PRIORITY and h.rank >= len(chrome) - BLOCK_SPAN]
    held = [h for h in last_words if h.state in _HOLDS]
    if held:
        return _finish(_newest(held), lines, rules, now, local)
    if last_words:  # say why it died, in its own words
        _, index = _newest(last_words)
        return _finish((ScreenState.CRASHED, index), lines, rules, now, local)
    return Classification(ScreenState.CRASHED, footer or lines[chrome[-1]].strip())


def _shell_back(lines: list[str], chrome: list[int]) -> bool:
    """The agent is gone and its shell is back: a prompt on the last line, or a prompt just
    under the shell's "Killed" with a dead TUI's stale footer still drawn below it."""
    if _SHELL_PROMPT.match(lines[chrome[-1]]):
        return True
    tail = chrome[-6:]
    return any(_PROMPT_OVER_TUI.match(lines[i]) and k > 0 and _KILLED.match(lines[tail[k - 1]])
               for k, i in enumerate(tail))


def newest_turn(text: str, rules: ScreenRules) -> str:
    """The newest submitted prompt echoed on screen (not the input box itself), or ""."""
    if not rules.turn:
        return ""
    lines, _ = _visible(text)
    chrome = [i for i, line in enumerate(lines) if line.strip()][-rules.chrome_lines * 3:]
    input_at = _input_line(lines, chrome, rules)
    for i in reversed(chrome):
        if i == input_at:
            continue
        for rx in rules.turn:
            m = rx.search(lines[i])
            if m:
                return _TURN_MARKER.sub("", lines[i][m.start():], count=1).strip()[:200]
    return ""


def input_text(text: str, rules: ScreenRules) -> str:
    """What the input box holds ("" when empty or showing only a placeholder hint)."""
    lines, _ = _visible(text)
    chrome = [i for i, line in enumerate(lines) if line.strip()][-rules.chrome_lines:]
    i = _draft_line(lines, chrome, rules)
    if i is None:
        return ""
    m = next(m for rx in rules.input if (m := rx.search(lines[i])) is not None)
    return (m.group("text") or "").strip()


def _drop_earlier_turns(
    hits: list[_Hit], lines: list[str], chrome: list[int], rules: ScreenRules
) -> list[_Hit]:
    """A blocking message above the newest prompt echo belongs to an earlier turn: stale."""
    if not rules.turn:
        return hits
    input_at = _input_line(lines, chrome, rules)
    turns = [i for i in chrome if i != input_at and any(rx.search(lines[i]) for rx in rules.turn)]
    if not turns:
        return hits
    start = max(turns)
    return [h for h in hits if h.index > start or h.state not in BLOCKING_PRIORITY]


def _decide(
    lines: list[str], chrome: list[int], hits: list[_Hit], rules: ScreenRules
) -> tuple[ScreenState, int]:
    blocking = [h for h in hits if h.state in BLOCKING_PRIORITY]
    busy = [h.index for h in hits if h.state is ScreenState.BUSY]
    draft_at = _draft_line(lines, chrome, rules)
    if busy:
        top, bottom = min(busy), max(busy)
        top_rank = min(h.rank for h in hits if h.index == top)
        retry_ranks = [r for r, i in enumerate(chrome)
                       if top_rank - RETRY_SPAN <= r <= top_rank and _RETRYING.search(
                           _message(lines, i))]
        over = [
            h for h in blocking
            if h.index > bottom
            or h.index in busy
            or any(rx.search(lines[h.index]) for rx in rules.overlay)
            or any(r - MESSAGE_LINES <= h.rank <= r for r in retry_ranks)
        ]
        if over:
            return _most_urgent(over)
        return ScreenState.BUSY, top
    running = _turn_running(lines, chrome, hits, rules)
    if running is not None:
        return ScreenState.BUSY, running
    if draft_at is not None:
        below = [h for h in blocking if h.index >= draft_at]
        if not below:
            return ScreenState.DRAFT, draft_at
        return _most_urgent(below)
    if blocking:
        return _most_urgent(blocking)
    idle = [h.index for h in hits if h.state is ScreenState.IDLE]
    if idle:
        return ScreenState.IDLE, max(idle)
    return ScreenState.UNKNOWN, -1


def _message(lines: list[str], index: int) -> str:
    """A line and the lines a hard wrap carried over from it (to read a notice whole)."""
    out = [lines[index]]
    for line in lines[index + 1: index + 1 + MESSAGE_LINES]:
        if not line.strip() or _NEW_MESSAGE.match(line):
            break
        out.append(line)
    return " ".join(part.strip() for part in out)


def _turn_running(
    lines: list[str], chrome: list[int], hits: list[_Hit], rules: ScreenRules
) -> int | None:
    """For CLIs that show no spinner while they stream: the newest prompt has output below it
    but no end-of-turn line yet (and no notice) — the agent is still answering."""
    if not rules.turn or not (rules.turn_end or rules.input_last):
        return None
    input_at = _input_line(lines, chrome, rules)
    if rules.input_last and input_at is not None:
        return None   # its prompt is back at the bottom: the turn is over
    stop = input_at if input_at is not None else chrome[-1] + 1
    echo = next((i for i in reversed(chrome) if i < stop and i != input_at
                 and any(rx.search(lines[i]) for rx in rules.turn)), None)
    if echo is None:
        return None
    after = [i for i in chrome if echo < i < stop]
    if not after or any(h.index > echo and h.state in BLOCKING_PRIORITY for h in hits):
        return None
    if any(rx.search(lines[i]) for i in after for rx in rules.turn_end):
        return None
    return after[-1]


def _newest(hits: list[_Hit]) -> tuple[ScreenState, int]:
    """The lowest hit; on one line, the most urgent state."""
    lowest = max(h.index for h in hits)
    best = min((h for h in hits if h.index == lowest),
               key=lambda h: BLOCKING_PRIORITY.index(h.state))
    return best.state, best.index


def _most_urgent(hits: list[_Hit]) -> tuple[ScreenState, int]:
    """The newest message — unless it is a menu or crash that a notice just above explains."""
    state, index = _newest(hits)
    stronger = _EXPLAINED_BY.get(state)
    rank = max(h.rank for h in hits if h.index == index)
    if stronger:
        near = [h for h in hits if h.state in stronger and rank - BLOCK_SPAN <= h.rank <= rank]
        if near:
            state, index = _newest(near)  # the closest notice above explains the menu
            rank = max(h.rank for h in hits if h.index == index)
    if state in _MENUS:   # a menu reads from its first line
        ranks = sorted((h.rank, h.index) for h in hits if h.state is state and h.rank <= rank)
        top = ranks[-1]
        for r, i in reversed(ranks[:-1]):
            if top[0] - r > BLOCK_SPAN:
                break
            top = (r, i)
        index = top[1]
    return state, index


def _input_line(lines: list[str], chrome: list[int], rules: ScreenRules) -> int | None:
    """The input box's line: the lowest line an `input` pattern matches inside its frame. A
    prompt with no frame is not the input box while a busy line shows below it (then the
    same shape is the echo of the prompt being worked on)."""
    busy_rx = rules.markers.get(ScreenState.BUSY, ())
    busy_below = False
    for i in reversed(chrome[-1:] if rules.input_last else chrome):
        if rules.input_frame is None and busy_below:
            return None
        if any(rx.search(lines[i]) for rx in busy_rx):
            busy_below = True
        if rules.input_frame is not None and (i == 0 or not rules.input_frame.search(lines[i - 1])):
            continue
        if any(rx.search(lines[i]) for rx in rules.input):
            return i
    return None


def _draft_line(lines: list[str], chrome: list[int], rules: ScreenRules) -> int | None:
    """The input line's index when it holds unsent text, else None."""
    i = _input_line(lines, chrome, rules)
    if i is None:
        return None
    m = next(m for rx in rules.input if (m := rx.search(lines[i])) is not None)
    typed = (m.group("text") or "").strip()
    if not typed or any(p.search(typed) for p in rules.placeholders):
        return None
    return i


def _finish(
    decided: tuple[ScreenState, int],
    lines: list[str],
    rules: ScreenRules,
    now: dt.datetime,
    local: dt.tzinfo,
) -> Classification:
    state, index = decided
    if index < 0:
        return Classification(state)
    if state is ScreenState.CRASHED:
        while index > 0 and _STACK_FRAME.match(lines[index]):
            index -= 1  # a stack trace's headline is the line above its frames
    width = max(len(line) for line in lines)
    for _ in range(MESSAGE_LINES if state in BLOCKING_PRIORITY else 0):
        above = lines[index - 1].rstrip() if index > 0 else ""  # a message hard-wrapped at
        wrapped = len(above) >= WRAP_FILL * width               # the pane's edge: show its
        if wrapped and not above.endswith(_SENTENCE_END) and _CONTINUATION.match(lines[index]):
            index -= 1                                          # first line
    evidence = lines[index].strip()[:EVIDENCE_CHARS]
    message = [lines[index]]
    for line in lines[index + 1: index + 1 + MESSAGE_LINES]:
        if not line.strip() or _NEW_MESSAGE.match(line):
            break
        message.append(line)
    near = lines[max(0, index - 2): index + 6]
    window = "\n".join(near)
    cause = next(
        (name for name, rxs in rules.causes.items() if any(rx.search(window) for rx in rxs)),
        None,
    )
    if state not in _WITH_RESET:
        return Classification(state, evidence, cause=cause)
    info = parse_reset(" ".join(message), now, local)  # the deciding message first: the newest
    if info.reset_at is None and info.retry_after is None:
        info = parse_reset(window, now, local)
    if info.reset_at is None and info.retry_after is None:
        # a hard-wrapped message can split a word ("try a" / "gain at 8:41 AM")
        info = parse_reset("".join(line.strip() for line in near), now, local)
    return Classification(state, evidence, info.reset_at, info.retry_after, cause)
