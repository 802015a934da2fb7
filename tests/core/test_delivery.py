"""Deliveries, step by step; time is an argument."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from pitcrew.supervisor.core.delivery import (
    DIAGNOSE_AFTER,
    RETRY_EVERY,
    WAIT_FOR_TERMINAL,
    Delivery,
    Do,
    Seen,
    Status,
    stale,
    step,
)
from pitcrew.supervisor.core.screen import ScreenState as S

T0 = 1_800_000_000.0
D = Delivery("d1", "work:%3", "please also update the changelog", T0)


def dos(steps) -> list[Do]:
    return [s.do for s in steps]


def test_types_at_an_empty_prompt_and_confirms_when_the_agent_takes_it() -> None:
    d, out = step(D, Seen(S.IDLE, True), T0)
    assert dos(out) == [Do.TYPE, Do.WAKE] and d.status is Status.TYPED
    d, out = step(d, Seen(S.BUSY, True, echoed=D.text), T0 + 2)
    assert dos(out) == [Do.CONFIRMED] and d.status is Status.DELIVERED
    assert step(d, Seen(S.IDLE, True), T0 + 100) == (d, ())


def test_never_types_over_a_draft_a_dialog_a_busy_agent_or_a_dead_pane() -> None:
    for seen in (Seen(S.DRAFT, True, input_text="my own words"), Seen(S.QUESTION, True),
                 Seen(S.BUSY, True), Seen(S.IDLE, False), Seen(S.RATE_LIMIT, True)):
        d, out = step(D, seen, T0)
        assert Do.TYPE not in dos(out) and Do.ENTER not in dos(out)
        assert d.attempts == 1 and d.next_at == T0 + RETRY_EVERY


def test_our_own_text_left_in_the_box_gets_enter_only() -> None:
    d, _ = step(D, Seen(S.IDLE, True), T0)
    d, out = step(d, Seen(S.DRAFT, True, input_text=D.text), T0 + RETRY_EVERY)
    assert d.status is Status.PENDING and d.attempts == 1     # not taken in time: a failure
    d, out = step(d, Seen(S.DRAFT, True, input_text=D.text), d.next_at)
    assert dos(out) == [Do.ENTER, Do.WAKE]                     # never typed a second time


def test_retried_every_15s_and_the_8th_failure_asks_for_one_diagnosis() -> None:
    d = D
    now = T0
    asked = 0
    for n in range(1, 12):
        d, out = step(d, Seen(S.RATE_LIMIT, True), now)
        asked += dos(out).count(Do.DIAGNOSE)
        assert d.attempts == n
        if n == DIAGNOSE_AFTER:
            assert Do.DIAGNOSE in dos(out)
        assert out[-1] == type(out[-1])(Do.WAKE, now + RETRY_EVERY)
        early, out = step(d, Seen(S.RATE_LIMIT, True), now + 5)   # too soon: just wait
        assert early == d and dos(out) == [Do.WAKE]
        now += RETRY_EVERY
    assert asked == 1


def test_a_hook_report_confirms() -> None:
    d, _ = step(D, Seen(S.IDLE, True), T0)
    d, out = step(d, Seen(S.IDLE, True, hook_prompt=D.text), T0 + 1)
    assert d.status is Status.DELIVERED and dos(out) == [Do.CONFIRMED]


@given(st.lists(st.tuples(st.sampled_from(list(S)), st.booleans(),
                          st.sampled_from(["", "mine", D.text]), st.floats(0, 40)),
                max_size=40))
def test_text_is_typed_at_most_once_and_only_into_an_empty_prompt(seq) -> None:
    d, now, typed = D, T0, 0
    for state, alive, box, gap in seq:
        now += gap
        seen = Seen(state, alive, input_text=box if state is S.DRAFT else "")
        d, out = step(d, seen, now)
        if Do.TYPE in dos(out):
            typed += 1
            assert state is S.IDLE and alive and not seen.input_text
        if Do.ENTER in dos(out):
            assert seen.input_text == D.text
        assert dos(out).count(Do.DIAGNOSE) <= 1
    assert typed <= 1 + d.attempts   # a retry after a lost text may type again, never twice at once


def test_a_text_taken_after_its_window_is_confirmed_not_typed_again() -> None:
    d, _ = step(D, Seen(S.IDLE, True), T0)
    d, _ = step(d, Seen(S.DRAFT, True, input_text="half of it"), T0 + RETRY_EVERY)
    assert d.status is Status.PENDING                              # missed its window …
    d, out = step(d, Seen(S.IDLE, True, echoed=D.text), d.next_at)
    assert dos(out) == [Do.CONFIRMED] and d.status is Status.DELIVERED   # … but it was taken


def test_an_agent_that_answers_at_once_confirms_without_a_busy_phase_and_gets_one_copy() -> None:
    d = Delivery("m1", "t", "quick question", 0.0, next_at=0.0)
    d, _ = step(d, Seen(S.IDLE, True), 0.0)
    assert d.status is Status.TYPED
    # at the next look the agent is idle again: no echo pattern, no busy phase — but the text
    # is on screen above an empty box
    shown = Seen(S.IDLE, True, "", "", None, "▸ quick question\n◇ done: quick question")
    d2, out = step(d, shown, 1.0)
    assert d2.status is Status.DELIVERED and [s.do for s in out] == [Do.CONFIRMED]


def test_a_message_typed_before_and_on_screen_now_is_never_typed_again() -> None:
    d = Delivery("m1", "t", "run the tests", 0.0, attempts=1, status=Status.PENDING,
                 next_at=20.0, typed_at=1.0)
    d2, out = step(d, Seen(S.IDLE, True, "", "", None, "> run the tests\n● ok"), 30.0)
    assert d2.status is Status.DELIVERED and Do.TYPE not in [s.do for s in out]


def test_a_delivery_is_stale_once_its_pane_or_server_is_not_the_one_it_was_meant_for() -> None:
    new = Delivery("d", "s:%1", "hi", created_at=100.0)
    seen = dataclasses.replace(new, seen_on="777@1")
    assert stale(new, 100.0 + WAIT_FOR_TERMINAL, present=False, server=None) is None
    assert stale(new, 101.0 + WAIT_FOR_TERMINAL, False, None) == "its terminal never appeared"
    assert stale(new, 1e9, present=True, server="888@2") is None    # first seen: not stale
    assert stale(seen, 200.0, present=False, server=None) == "its pane was closed"
    assert stale(seen, 200.0, present=True, server="777@1") is None
    assert stale(seen, 200.0, present=True, server=None) is None    # not watched: can't tell
    assert "restarted" in (stale(seen, 200.0, present=True, server="888@2") or "")
    unknown = dataclasses.replace(new, seen_on="")                  # seen, server unknown
    assert stale(unknown, 200.0, present=True, server="888@2") is None
