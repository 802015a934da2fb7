"""The classifier against the tuning split of the screen fixtures: real captures of the real
CLIs, and the phrasings users reported in public issue trackers (tests/fixtures/screens/
FORMAT.md). Every one reads as labelled; the held-out split (never tuned on) is held to
accuracy thresholds instead, in test_classifier_heldout.py."""

from __future__ import annotations

from collections import Counter

import pytest

from pitcrew.supervisor.core.screen import ScreenState
from tests.support.screens import all_fixtures, run

FIXTURES = all_fixtures()
TUNING = [f for f in FIXTURES if f.split == "tuning"]


@pytest.mark.parametrize("fx", TUNING, ids=[f.id for f in TUNING])
def test_screen_reads_as_labelled(fx) -> None:
    got = run(fx)
    assert got.state.value == fx.state, f"evidence: {got.evidence!r}\nsource: {fx.source}"
    if fx.reset_at is not None:
        assert got.reset_at == fx.reset_at
    if fx.retry_after is not None:
        assert got.retry_after == fx.retry_after
    if fx.evidence and fx.state != "unknown":
        assert fx.evidence.lower() in got.evidence.lower()


def test_the_fixtures_cover_what_the_issue_asks_for() -> None:
    captured = Counter(f.provider for f in FIXTURES if f.origin == "captured")
    reported = Counter(f.provider for f in FIXTURES if f.origin == "reported")
    assert len([p for p in captured if p != "fakeagent"]) >= 8, captured
    assert len(reported) >= 8, reported
    states = {f.state for f in FIXTURES}
    assert states >= {s.value for s in ScreenState}, {s.value for s in ScreenState} - states
    assert sum(f.hard_negative for f in FIXTURES) >= 10
    assert sum(f.reset_at is not None for f in FIXTURES) >= 20
