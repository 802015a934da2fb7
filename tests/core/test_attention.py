"""The attention rule (core/attention.py) and the needs-you notification policy
(core/nudges.py): tables over an injected clock, no I/O."""

from __future__ import annotations

import pytest

from pitcrew.supervisor.core.attention import (
    Attention,
    Attn,
    Signals,
    assess,
    rank,
    waited,
)
from pitcrew.supervisor.core.nudges import Candidate, Nudges, headline

A = Attention
T0 = 1_000_000.0


@pytest.mark.parametrize(("signals", "attention", "source", "told"), [
    (Signals("question", "Allow this command? 1. Yes 2. No"), A.NEEDS_YOU, "screen", False),
    (Signals("picker"), A.NEEDS_YOU, "screen", False),
    (Signals("login_required"), A.NEEDS_YOU, "screen", False),
    (Signals("draft"), A.NEEDS_YOU, "screen", False),
    (Signals("rate_limit"), A.NEEDS_YOU, "screen", False),
    (Signals("busy"), A.WORKING, "screen", False),
    (Signals("looping"), A.WORKING, "screen", False),
    (Signals("idle"), A.IDLE, "screen", False),
    (Signals("exited", alive=False), A.STOPPED, "process", False),
    (Signals("crashed", alive=False), A.STOPPED, "process", False),
    (Signals("crashed", alive=False, phase="waiting", hold_reason="Autopilot acts in 5 s"),
     A.WORKING, "autopilot", False),
    (Signals("rate_limit", phase="waiting", hold="rate_limit"), A.WORKING, "autopilot", False),
    (Signals("crashed", alive=False, phase="stopped"), A.NEEDS_YOU, "autopilot", True),
    (Signals("login_required", phase="hold", hold="login"), A.NEEDS_YOU, "autopilot", True),
    (Signals("crashed", alive=False, phase="hold", hold="paused"), A.NEEDS_YOU, "autopilot",
     False),
    (Signals("question", phase="hold", hold="user"), A.NEEDS_YOU, "screen", False),
    (Signals("unknown"), A.IDLE, "screen", False),
])
def test_first_assessment(signals: Signals, attention: Attention, source: str,
                          told: bool) -> None:
    a = assess(None, signals, T0)
    assert (a.attention, a.source, a.told) == (attention, source, told)
    assert a.since == T0


def test_the_question_line_is_the_evidence() -> None:
    a = assess(None, Signals("question", "  Allow   this command?  "), T0)
    assert a.why == "screen: asks a question — Allow this command?"


def test_since_is_kept_while_only_the_reason_changes() -> None:
    first = assess(None, Signals("question"), T0)
    later = assess(first, Signals("picker"), T0 + 30)
    assert later.attention is A.NEEDS_YOU and later.since == T0
    assert "choice" in later.why


def test_a_first_assessment_starts_when_the_screen_state_began() -> None:
    a = assess(None, Signals("question", state_since=T0 - 600), T0)
    assert a.since == T0 - 600


def test_idle_after_working_is_done_until_you_look() -> None:
    working = assess(None, Signals("busy"), T0)
    done = assess(working, Signals("idle", looked_at=T0 - 5), T0 + 10)
    assert done.attention is A.DONE and done.since == T0 + 10
    still = assess(done, Signals("idle", looked_at=T0 - 5), T0 + 100)
    assert still.attention is A.DONE and still.since == T0 + 10
    seen = assess(still, Signals("idle", looked_at=T0 + 120), T0 + 121)
    assert seen.attention is A.IDLE and seen.since == T0 + 121


def test_a_task_that_finishes_while_you_look_is_not_done() -> None:
    working = assess(None, Signals("busy"), T0)
    assert assess(working, Signals("idle", looked_at=T0 + 10), T0 + 10).attention is A.IDLE


def test_a_question_answered_with_escape_is_idle_not_done() -> None:
    asked = assess(None, Signals("question"), T0)
    assert assess(asked, Signals("idle"), T0 + 5).attention is A.IDLE


def test_an_unreadable_screen_keeps_the_previous_attention() -> None:
    asked = assess(None, Signals("question"), T0)
    again = assess(asked, Signals("unknown"), T0 + 5)
    assert again == asked


def test_rank_puts_the_oldest_need_first() -> None:
    rows = [("idle", T0), ("needs_you", T0 + 50), ("working", T0), ("needs_you", T0 + 10),
            ("stopped", T0), ("done", T0), ("mystery", None)]
    assert sorted(rows, key=lambda r: rank(*r)) == [
        ("needs_you", T0 + 10), ("needs_you", T0 + 50), ("working", T0), ("done", T0),
        ("idle", T0), ("stopped", T0), ("mystery", None)]


@pytest.mark.parametrize(("seconds", "text"), [(0, "0 s"), (45, "45 s"), (720, "12 min"),
                                               (9000, "2.5 h")])
def test_waited(seconds: float, text: str) -> None:
    assert waited(T0 - seconds, T0) == text
    assert waited(None, T0) == ""


# -- nudges --------------------------------------------------------------------------------


def need(key: str, since: float = T0, **kw: object) -> Candidate:
    return Candidate(key, since, **kw)  # type: ignore[arg-type]


def run(n: Nudges, cands: list[Candidate], watching: tuple[str, ...] = (),
        start: float = T0, until: float = T0 + 60) -> list[tuple[float, tuple[str, ...]]]:
    sent = []
    t = start
    while t <= until:
        batch = n.step(cands, watching, t)
        if batch:
            sent.append((t, tuple(c.key for c in batch)))
        t += 1.0
    return sent


def test_one_notification_after_the_grace_period_and_the_burst_window() -> None:
    assert run(Nudges(grace=20, burst=3), [need("a")]) == [(T0 + 23, ("a",))]


def test_nothing_for_an_answer_typed_within_the_grace_period() -> None:
    n = Nudges(grace=20, burst=3)
    assert run(n, [need("a")], until=T0 + 10) == []
    assert run(n, [], start=T0 + 11) == []


def test_nothing_while_you_look_and_nothing_later_for_a_need_you_saw() -> None:
    n = Nudges(grace=20, burst=3)
    assert run(n, [need("a")], watching=("a",), until=T0 + 5) == []
    assert run(n, [need("a")], start=T0 + 6, until=T0 + 100) == []


def test_a_new_need_of_the_same_terminal_is_notified_again() -> None:
    n = Nudges(grace=20, burst=3)
    assert run(n, [need("a")]) == [(T0 + 23, ("a",))]
    assert run(n, [], start=T0 + 61, until=T0 + 61) == []
    assert run(n, [need("a", T0 + 70)], start=T0 + 70, until=T0 + 100) == [(T0 + 93, ("a",))]


def test_autopilot_already_told_means_no_second_notification() -> None:
    assert run(Nudges(grace=20, burst=3), [need("a", told=True)]) == []


def test_a_burst_is_one_notification() -> None:
    cands = [need("a"), need("b", T0 + 1), need("c", T0 + 2), need("d", T0 + 30)]
    sent = run(Nudges(grace=20, burst=3), cands, until=T0 + 80)
    assert sent == [(T0 + 23, ("a", "b", "c")), (T0 + 53, ("d",))]


def test_headlines() -> None:
    assert headline([need("a")], "Claude Code") == "Claude Code needs you"
    assert headline([need("a", kind="done")], "Codex") == "Codex finished its task"
    assert headline([need("a"), need("b")], "x") == "2 agents need you"
    assert headline([need("a", kind="done")] * 3, "x") == "3 agents finished their tasks"


def test_attn_source() -> None:
    assert Attn(A.IDLE, T0, "screen: at its prompt").source == "screen"
