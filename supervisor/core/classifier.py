"""The local screen classifier: pane text + a provider's screen rules → one state.

Theory of operation
-------------------
A pane shows two things: the transcript (what the agent wrote, including code and diffs that
may say "429 Too Many Requests") and the CLI's own chrome (spinner/status line, dialogs, the
input box and the few lines just above it). Only the chrome tells the state, so:

1. Only the last `chrome_lines` non-blank lines are read (the visible screen's tail), each cut
   to a bounded length; a 5,000-line scrollback costs the same as a screen.
2. Lines that look like code — inside a ``` fence, or diff lines (`+`/`-`, with or without a
   line number) — never count as evidence for an error state.
3. A busy indicator (spinner, "esc to interrupt") means the agent is working. Error text above
   it is transcript, except a "retrying" line right above the spinner, which is the CLI
   reporting its own retries; anything on or below the busy line (a dialog drawn under it)
   wins over busy.
4. Without a busy indicator, the lowest blocking match (limit, login, upgrade, continue,
   connection, crash, question, picker) decides; when one dialog block holds several, the most
   urgent wins (a limit menu is a picker *about* a rate limit: it is `rate_limit`).
5. Text the user typed into the input box and did not send is `draft` — unless a dialog is
   drawn below the input box. Placeholder hints count as an empty box. An empty box is `idle`.
6. Nothing recognised is `unknown`, never a guess.

Reset times and retry delays are read from the evidence line and its neighbours only.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from supervisor.core.reset_time import parse_reset
from supervisor.core.screen import BLOCKING_PRIORITY, Classification, ScreenState
from supervisor.providers.model import ScreenRules

MAX_LINES = 400          # a visible screen is never taller; the rest is scrollback
MAX_LINE_CHARS = 600     # bounds regex work on pathological lines
BLOCK_SPAN = 8           # lines above the lowest blocking match that belong to the same dialog
RETRY_SPAN = 3           # lines above a spinner that may carry the CLI's own retry notice
EVIDENCE_CHARS = 240

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PANE_DEAD = re.compile(r"^Pane is dead( \(.*\))?\s*$")
_FENCE = re.compile(r"^\s*(?:[│┃|]\s*)?(?:```|~~~)")
_DIFF = re.compile(r"^\s*(?:[│┃|⎿]\s*)?(?:\d+\s*)?[+\-](?=\s|$)(?!\s*[+\-]{2})")
_RETRYING = re.compile(r"retry(?:ing)?\b|attempt \d+\s*(?:/|of)\s*\d+|reconnecting", re.I)
_WITH_RESET = frozenset(
    {ScreenState.RATE_LIMIT, ScreenState.CONNECTION_LOST, ScreenState.CONTINUE_PROMPT,
     ScreenState.BUSY, ScreenState.LOGIN_REQUIRED}
)


@dataclass(frozen=True, slots=True)
class _Hit:
    index: int
    state: ScreenState


def visible_lines(text: str) -> list[str]:
    """The screen's lines as the classifier reads them: no escapes, no tmux footer, bounded."""
    tail = text[-MAX_LINES * (MAX_LINE_CHARS + 1):]
    lines = tail.splitlines()[-MAX_LINES:]
    out = []
    for line in lines:
        line = _CONTROL.sub("", _ANSI.sub("", line[: MAX_LINE_CHARS * 4]))[:MAX_LINE_CHARS]
        out.append(line.rstrip())
    while out and (not out[-1].strip() or _PANE_DEAD.match(out[-1].strip())):
        out.pop()
    return out


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
    lines = visible_lines(text)
    chrome = [i for i, line in enumerate(lines) if line.strip()][-rules.chrome_lines:]
    if not chrome:
        return Classification(ScreenState.UNKNOWN)
    code = _code_mask(lines)
    hits: list[_Hit] = []
    for i in reversed(chrome):
        for state, patterns in rules.markers.items():
            if code[i] and state not in (ScreenState.BUSY, ScreenState.IDLE):
                continue
            if any(p.search(lines[i]) for p in patterns):
                hits.append(_Hit(i, state))
    decided = _decide(lines, chrome, hits, rules)
    return _finish(decided, lines, rules, now, local)


def _decide(
    lines: list[str], chrome: list[int], hits: list[_Hit], rules: ScreenRules
) -> tuple[ScreenState, int]:
    blocking = [h for h in hits if h.state in BLOCKING_PRIORITY]
    busy = [h.index for h in hits if h.state is ScreenState.BUSY]
    draft_at = _draft_line(lines, chrome, rules)
    if busy:
        b = max(busy)
        over = [
            h for h in blocking
            if h.index >= b or (h.index >= b - RETRY_SPAN and _RETRYING.search(lines[h.index]))
        ]
        if over:
            return _most_urgent(over)
        return ScreenState.BUSY, b
    if draft_at is not None:
        below = [h for h in blocking if h.index > draft_at]
        if not below:
            return ScreenState.DRAFT, draft_at
        return _most_urgent(below)
    if blocking:
        return _most_urgent(blocking)
    idle = [h.index for h in hits if h.state is ScreenState.IDLE]
    if idle:
        return ScreenState.IDLE, max(idle)
    return ScreenState.UNKNOWN, -1


def _most_urgent(hits: list[_Hit]) -> tuple[ScreenState, int]:
    lowest = max(h.index for h in hits)
    block = [h for h in hits if h.index >= lowest - BLOCK_SPAN]
    best = min(block, key=lambda h: (BLOCKING_PRIORITY.index(h.state), -h.index))
    return best.state, best.index


def _draft_line(lines: list[str], chrome: list[int], rules: ScreenRules) -> int | None:
    """The input line's index when it holds unsent text, else None."""
    for i in reversed(chrome):
        for rx in rules.input:
            m = rx.search(lines[i])
            if m is None:
                continue
            typed = (m.group("text") or "").strip()
            if not typed or any(p.search(typed) for p in rules.placeholders):
                return None
            return i
    return None


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
    evidence = lines[index].strip()[:EVIDENCE_CHARS]
    window = "\n".join(lines[max(0, index - 2): index + 4])
    cause = next(
        (name for name, rxs in rules.causes.items() if any(rx.search(window) for rx in rxs)),
        None,
    )
    if state not in _WITH_RESET:
        return Classification(state, evidence, cause=cause)
    info = parse_reset(window, now, local)
    return Classification(state, evidence, info.reset_at, info.retry_after, cause)
