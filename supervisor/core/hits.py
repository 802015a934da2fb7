"""A rule that fired on a line, and how the newest (most urgent) message among several is
picked: a menu defers to the notice above that explains it, and is read from its first line."""

from __future__ import annotations

from dataclasses import dataclass

from pitcrew.supervisor.core.screen import BLOCKING_PRIORITY, ScreenState

BLOCK_SPAN = 8           # lines above the lowest blocking match that belong to the same dialog
_NOTICES = frozenset({ScreenState.LOGIN_REQUIRED, ScreenState.RATE_LIMIT,
                      ScreenState.UPGRADE_PROMPT, ScreenState.CONTINUE_PROMPT})
# menus are read from their first line
MENUS = frozenset({ScreenState.QUESTION, ScreenState.PICKER, ScreenState.UPGRADE_PROMPT})
HOLDS = frozenset({ScreenState.LOGIN_REQUIRED, ScreenState.RATE_LIMIT})   # a restart cannot fix
_EXPLAINED_BY: dict[ScreenState, frozenset[ScreenState]] = {
    ScreenState.PICKER: _NOTICES | {ScreenState.QUESTION},
    ScreenState.QUESTION: _NOTICES,
    ScreenState.CRASHED: HOLDS,
}


@dataclass(frozen=True, slots=True)
class Hit:
    index: int        # line number in `Read.lines`
    rank: int         # position among the non-blank chrome lines (spans count these)
    state: ScreenState


def newest(hits: list[Hit]) -> tuple[ScreenState, int]:
    """The lowest hit; on one line, the most urgent state."""
    lowest = max(h.index for h in hits)
    best = min((h for h in hits if h.index == lowest),
               key=lambda h: _urgency(h.state))
    return best.state, best.index


def _urgency(state: ScreenState) -> int:
    return BLOCKING_PRIORITY.index(state) if state in BLOCKING_PRIORITY else len(BLOCKING_PRIORITY)


def most_urgent(hits: list[Hit]) -> tuple[ScreenState, int]:
    """The newest message — unless it is a menu or crash that a notice just above explains."""
    state, index = newest(hits)
    stronger = _EXPLAINED_BY.get(state)
    rank = max(h.rank for h in hits if h.index == index)
    if stronger:
        near = [h for h in hits if h.state in stronger and rank - BLOCK_SPAN <= h.rank <= rank]
        if near:
            state, index = newest(near)  # the closest notice above explains the menu
            rank = max(h.rank for h in hits if h.index == index)
    if state in MENUS:   # a menu reads from its first line
        ranks = sorted((h.rank, h.index) for h in hits if h.state is state and h.rank <= rank)
        top = ranks[-1]
        for k, i in reversed(ranks[:-1]):
            if top[0] - k > BLOCK_SPAN:
                break
            top = (k, i)
        index = top[1]
    return state, index
