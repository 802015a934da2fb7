"""The health machine: every edge in the table, and illegal events change nothing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pitcrew.supervisor.core.health import (
    TRANSITIONS,
    Health,
    HealthEvent,
    IllegalTransition,
    advance,
)

H, E = Health, HealthEvent
ORDER = {H.BOOTING: 0, H.WORKING: 1, H.STALLED: 2, H.COMPLETED: 3, H.ZOMBIE: 3, H.LOOPING: 1.5}


@pytest.mark.parametrize(
    ("health", "event", "after"),
    [
        (H.BOOTING, E.SEEN_WORKING, H.WORKING),
        (H.WORKING, E.FINISHED, H.COMPLETED),
        (H.WORKING, E.WENT_QUIET, H.STALLED),
        (H.WORKING, E.SEEN_DEAD, H.ZOMBIE),
        (H.STALLED, E.SEEN_DEAD, H.ZOMBIE),
        (H.ZOMBIE, E.RELAUNCHED, H.BOOTING),
        (H.COMPLETED, E.PROMPTED, H.WORKING),
        (H.STALLED, E.PROMPTED, H.WORKING),
    ],
)
def test_edges(health: Health, event: HealthEvent, after: Health) -> None:
    assert advance(health, event) is after


@pytest.mark.parametrize(
    ("health", "event"),
    [(H.ZOMBIE, E.SEEN_WORKING), (H.COMPLETED, E.WENT_QUIET), (H.ZOMBIE, E.PROMPTED),
     (H.COMPLETED, E.FINISHED), (H.BOOTING, E.WENT_QUIET)],
)
def test_illegal_events_raise_and_change_nothing(health: Health, event: HealthEvent) -> None:
    with pytest.raises(IllegalTransition):
        advance(health, event)


@given(st.sampled_from(list(H)), st.sampled_from(list(E)))
def test_health_only_moves_forward_within_a_run(health: Health, event: HealthEvent) -> None:
    if (health, event) not in TRANSITIONS:
        with pytest.raises(IllegalTransition):
            advance(health, event)
        return
    after = advance(health, event)
    if event not in (E.PROMPTED, E.RELAUNCHED):
        assert ORDER[after] >= ORDER[health]
