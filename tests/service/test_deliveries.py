"""Deliveries over fakes: what gets typed into which pane, when Enter comes, and how often the
screen is read while a typed message waits to be taken."""

from __future__ import annotations

import dataclasses

from pitcrew.supervisor.core.delivery import RETRY_EVERY, WAIT_FOR_TERMINAL, Delivery, Status
from pitcrew.supervisor.service import deliveries as delivery_store
from pitcrew.supervisor.service.deliveries import READ_EVERY, Deliveries, resolve_terminal
from pitcrew.supervisor.service.effects import ENTER_GAP
from pitcrew.supervisor.service.events import DeliveryDue, PressEnter
from tests.service.fakes import (
    IDLE,
    PERMISSION_MENU,
    SERVER,
    T0,
    Rig,
    busy,
    draft,
    idle_after,
    make_watched,
)


def test_a_message_to_an_idle_agent_is_typed_once_and_enter_comes_later() -> None:
    rig = Rig()
    rig.terminal()
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    assert rig.tmux.typed_into("%1") == ["run the tests"]
    assert rig.tmux.enters("%1") == 0                      # not with the paste
    [enter] = rig.scheduler.events(PressEnter)
    assert rig.scheduler.expect("enter:test:%1").when == T0 + ENTER_GAP
    rig.clock.advance(ENTER_GAP)
    rig.run_due()
    assert rig.tmux.enters("%1") == 1
    assert enter.pane_id == "%1"
    assert rig.tmux.typed_into("%1") == ["run the tests"]  # typed once
    assert rig.deliveries.items[d.id].status is Status.TYPED


def test_a_typed_message_is_confirmed_when_the_agent_starts_working_on_it() -> None:
    rig = Rig()
    rig.terminal()
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    rig.tmux.screens["%1"] = busy("run the tests")
    rig.run_for(1.0)
    assert rig.deliveries.items[d.id].status is Status.DELIVERED
    assert rig.deliveries.open() == []
    assert rig.scheduler.job(f"delivery:{d.id}") is None   # nothing left to look at


def test_a_typed_message_is_confirmed_by_its_echo_after_it_finished() -> None:
    rig = Rig()
    rig.terminal()
    d = rig.deliveries.queue("%1", "say hi")
    assert d is not None
    rig.tmux.screens["%1"] = idle_after("say hi")          # done before we looked again
    rig.run_for(1.0)
    assert rig.deliveries.items[d.id].status is Status.DELIVERED


def test_the_hook_report_of_the_prompt_confirms_a_typed_message() -> None:
    rig = Rig()
    rig.terminal()
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    rig.deliveries.hook_prompt("test:%1", "run the tests")
    assert rig.deliveries.items[d.id].status is Status.DELIVERED


def test_the_confirmation_wait_reads_the_screen_at_most_once_a_second() -> None:
    rig = Rig()
    rig.terminal()
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    rig.tmux.screens["%1"] = draft("run the tests")        # not taken: still in the box
    rig.run_for(10.0, tick=0.05)
    assert rig.deliveries.items[d.id].status is Status.TYPED
    assert rig.tmux.captures["%1"] <= 1 + 10 / READ_EVERY
    assert rig.tmux.captures["%1"] >= 5                    # … but it does keep looking


def test_many_waiting_deliveries_share_one_read_per_second_of_their_pane() -> None:
    rig = Rig()
    rig.terminal(screen=draft("first"))
    saved = [Delivery(f"d{i}", "test:%1", text, T0 - 0.5, status=Status.TYPED, typed_at=T0 - 0.5)
             for i, text in enumerate(("first", "second", "third"))]
    rig.deliveries = Deliveries(rig.watched, rig.reader, rig.effects, rig.scheduler, rig.clock,
                                rig.persist, rig.policy, saved)
    rig.deliveries.restore()                               # a restart: one job each
    assert {j.key for j in rig.scheduler.jobs} == {"delivery:d0", "delivery:d1", "delivery:d2"}
    rig.deliveries.due_now()                               # … plus the loop's fallback sweep
    rig.run_for(5.0, tick=0.05)
    rig.deliveries.due_now()
    assert rig.tmux.captures["%1"] <= 1 + 5 / READ_EVERY


def test_a_message_to_a_draft_is_never_typed_and_retried_every_15s() -> None:
    rig = Rig()
    rig.terminal(screen=draft("my own unsent words"))
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    rig.run_for(40.0, tick=0.5)
    assert rig.tmux.typed == []
    assert rig.tmux.enters("%1") == 0
    d = rig.deliveries.items[d.id]
    assert d.status is Status.PENDING and d.attempts == 3  # at 0, 15 and 30 s
    assert d.next_at == T0 + 3 * RETRY_EVERY


def test_a_message_waits_out_a_question_then_goes_in_when_the_box_is_empty() -> None:
    rig = Rig()
    rig.terminal(screen=PERMISSION_MENU)
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    rig.run_for(10.0, tick=0.5)
    assert rig.tmux.typed == []
    rig.tmux.screens["%1"] = IDLE                          # the user answered it
    rig.run_for(RETRY_EVERY, tick=0.5)
    assert rig.tmux.typed_into("%1") == ["run the tests"]


def test_the_eighth_failed_attempt_asks_for_one_diagnosis_and_retries_go_on() -> None:
    rig = Rig()
    rig.terminal(screen=busy("a long refactor"))
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    rig.run_for(7 * RETRY_EVERY, tick=0.5)                 # attempts 1 … 8
    assert rig.diagnosed == [("test:%1", 8)]
    rig.run_for(3 * RETRY_EVERY, tick=0.5)
    assert rig.diagnosed == [("test:%1", 8)]               # once
    assert rig.deliveries.items[d.id].attempts == 11
    assert rig.tmux.typed == []


def test_the_same_delivery_id_queued_twice_is_queued_and_typed_once() -> None:
    rig = Rig()
    rig.terminal()
    first = rig.deliveries.queue("%1", "run the tests", delivery_id="req-1")
    again = rig.deliveries.queue("%1", "run the tests", delivery_id="req-1")
    assert first is not None and again is not None and again.id == first.id == "req-1"
    assert list(rig.deliveries.items) == ["req-1"]
    assert rig.tmux.typed_into("%1") == ["run the tests"]


def test_a_message_becomes_one_line_and_an_unknown_terminal_is_refused() -> None:
    rig = Rig()
    rig.terminal()
    d = rig.deliveries.queue("work:%1", "fix\nthe   parser\n")
    assert d is not None and d.text == "fix the parser"    # a newline would submit early
    assert rig.deliveries.queue("%9", "hello") is None
    assert rig.deliveries.queue("%1", "  \n ") is None


def test_a_typed_text_not_taken_in_time_gets_enter_again_never_a_second_copy() -> None:
    rig = Rig()
    rig.terminal()
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    rig.tmux.screens["%1"] = draft("run the tests")        # the Enter did not take
    rig.run_for(2 * RETRY_EVERY, tick=0.5)
    assert rig.tmux.typed_into("%1") == ["run the tests"]
    assert rig.tmux.enters("%1") >= 2                      # its own Enter, then Enter alone


def test_after_a_restart_a_typed_message_still_in_the_box_gets_enter_never_a_copy() -> None:
    rig = Rig()
    rig.terminal(screen=draft("run the tests"))
    typed = Delivery("d1", "test:%1", "run the tests", T0 - 60, status=Status.TYPED,
                     typed_at=T0 - 60)
    rig.deliveries = Deliveries(rig.watched, rig.reader, rig.effects, rig.scheduler, rig.clock,
                                rig.persist, rig.policy, [typed])
    rig.deliveries.restore()
    rig.run_for(RETRY_EVERY + 1, tick=0.5)
    assert rig.tmux.typed == []
    assert rig.tmux.enters("%1") == 1
    assert rig.deliveries.items["d1"].status is Status.TYPED


def test_to_json_and_load_round_trip() -> None:
    rig = Rig()
    rig.terminal(screen=draft("busy typing"))
    rig.terminal("%2")
    waiting = rig.deliveries.queue("%1", "for later", delivery_id="a")
    typed = rig.deliveries.queue("%2", "now", delivery_id="b")
    assert waiting is not None and typed is not None
    loaded = delivery_store.load(rig.deliveries.to_json())
    assert loaded == rig.deliveries.items
    assert loaded["b"].status is Status.TYPED


def test_load_drops_entries_that_do_not_read_back() -> None:
    good = {"id": "a", "terminal": "test:%1", "text": "hi", "created_at": T0,
            "status": "pending"}
    items = delivery_store.load([good, {"id": "b"}, {**good, "id": "c", "status": "lost"}])
    assert list(items) == ["a"]
    assert delivery_store.load({"not": "a list"}) == {}


def test_a_second_message_is_not_typed_over_the_first_one_still_in_the_box() -> None:
    """Was a bug: the second delivery is decided on the reading taken *before* the first was typed
    (`Reader.fresh(w, READ_EVERY)` reuses it for up to 1 s), so it is typed at once: the
    first message's Enter is pressed early (before ENTER_GAP) and the second text goes into a
    box that is no longer empty / an agent that is now busy."""
    rig = Rig()
    rig.terminal()
    rig.deliveries.queue("%1", "first message")
    rig.tmux.screens["%1"] = draft("first message")        # what the pane shows now
    rig.clock.advance(0.2)
    rig.deliveries.queue("%1", "second message")
    assert rig.tmux.typed_into("%1") == ["first message"]


def test_postpone_holds_pending_messages_until_the_reset() -> None:
    import datetime as dt

    rig = Rig()
    rig.terminal(screen=PERMISSION_MENU)
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    reset = dt.datetime.fromtimestamp(T0 + 3600, dt.UTC)
    rig.deliveries.postpone("test:%1", reset)
    assert rig.deliveries.items[d.id].next_at == T0 + 3600
    job = rig.scheduler.expect(f"delivery:{d.id}")
    assert (job.when, job.event) == (T0 + 3600, DeliveryDue(d.id))


def test_resolve_terminal_by_key_pane_id_or_target() -> None:
    w = make_watched("%3")
    watched = {w.key: w}
    assert resolve_terminal("test:%3", watched) == "test:%3"
    assert resolve_terminal("%3", watched) == "test:%3"
    assert resolve_terminal("work:%3", watched) == "test:%3"
    assert resolve_terminal("%4", watched) is None


def test_a_message_the_ledger_shows_typed_is_never_typed_again_after_state_is_lost() -> None:
    """state.json was lost: the command spool replays `pitcrew send`; the append-only ledger
    says that id was typed already."""
    first = Rig()
    first.terminal()
    d = first.deliveries.queue("%1", "run the tests", delivery_id="m-42")
    assert d is not None and first.tmux.typed_into("%1") == ["run the tests"]
    [row] = [r for r in first.ledger.rows if r.badge.value == "Typed"]
    assert row.readings == {"delivery_id": "m-42"}
    again = Rig()                                   # a restart with no state.json
    again.terminal()
    typed = {str(r.readings.get("delivery_id")) for r in first.ledger.rows}
    again.deliveries.typed_before = typed.__contains__
    assert again.deliveries.queue("%1", "run the tests", delivery_id="m-42") is None
    assert again.tmux.typed == []


def _watching_panes(rig: Rig) -> Rig:
    """As the loop wires it: a delivery asks tmux whether its terminal's pane is listed."""
    rig.deliveries.pane_there = lambda key: key.rpartition(":")[2] in rig.tmux.panes
    return rig


def _skipped(rig: Rig) -> list[str]:
    return [r.reason for r in rig.ledger.rows if r.badge.value == "Skipped"]


def test_a_message_whose_pane_closed_is_dropped_with_a_row_not_kept_for_its_pane_id() -> None:
    rig = _watching_panes(Rig())
    w = rig.terminal(screen=busy("a long job"), server="777@1")
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None and rig.tmux.typed_into("%1") == []          # busy: it waits
    del rig.watched[w.key]                                             # the pane closed
    del rig.tmux.panes["%1"]
    rig.run_for(RETRY_EVERY + 1, tick=0.5)
    assert d.id not in rig.deliveries.items
    assert _skipped(rig) == ["did not type a queued message: its pane was closed"]
    rig.terminal(screen=IDLE, server="777@1")       # whatever gets that key later: nothing
    rig.run_for(RETRY_EVERY + 1, tick=0.5)
    assert rig.tmux.typed_into("%1") == []


def test_a_message_for_a_pane_id_on_a_restarted_tmux_server_is_dropped_with_a_row() -> None:
    rig = Rig()
    w = rig.terminal(screen=busy("a long job"), server="777@1")
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None and rig.deliveries.items[d.id].seen_on == "777@1"
    w.state = dataclasses.replace(w.state, server="888@2")    # the same key, another server
    rig.tmux.screens["%1"] = IDLE
    rig.run_for(RETRY_EVERY + 1, tick=0.5)
    assert rig.tmux.typed_into("%1") == []
    assert d.id not in rig.deliveries.items
    [why] = _skipped(rig)
    assert "tmux server was restarted" in why


def test_a_waiting_message_goes_to_a_pane_that_appears_and_expires_if_none_does() -> None:
    rig = _watching_panes(Rig())
    soon = rig.deliveries.queue(f"{SERVER}:%5", "first task", wait=True)   # as `send --wait`
    never = rig.deliveries.queue(f"{SERVER}:%6", "second task", wait=True)
    assert soon is not None and never is not None
    rig.run_for(60, tick=1.0)
    rig.terminal("%5")                                       # the pane it waited for
    rig.deliveries.ready(f"{SERVER}:%5")                     # its prompt, as the loop says
    rig.run_for(1.0)
    assert rig.tmux.typed_into("%5") == ["first task"]
    rig.clock.advance(WAIT_FOR_TERMINAL)
    rig.run_for(RETRY_EVERY + 1, tick=0.5)
    assert never.id not in rig.deliveries.items
    assert _skipped(rig) == ["did not type a queued message: its terminal never appeared"]


def test_a_terminal_on_a_host_that_is_down_keeps_its_message() -> None:
    rig = Rig()
    w = rig.terminal(screen=busy("a long job"), server="777@1")
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    rig.deliveries.reachable = lambda key: False
    del rig.watched[w.key]                                   # not listed while the host is down
    rig.run_for(RETRY_EVERY + 1, tick=0.5)
    assert d.id in rig.deliveries.items and _skipped(rig) == []


def test_an_agent_that_exited_keeps_its_message_for_the_next_one_in_its_pane() -> None:
    """After a restart of Pitcrew, a pane whose agent had exited is not watched: its pane is
    still there, so its message waits (it is typed once an agent runs there again)."""
    rig = _watching_panes(Rig())
    w = rig.terminal(screen=busy("a long job"), server="777@1")
    d = rig.deliveries.queue("%1", "run the tests")
    assert d is not None
    del rig.watched[w.key]                                   # not watched, pane still listed
    rig.run_for(RETRY_EVERY + 1, tick=0.5)
    assert d.id in rig.deliveries.items and _skipped(rig) == []


def test_a_control_character_in_a_queued_text_is_typed_as_its_visible_escape() -> None:
    """A brief or rerun prompt is built from what Pitcrew read: text, never keys."""
    rig = Rig()
    rig.terminal()
    d = rig.deliveries.queue("%1", "\x04rm -rf x\x1b[2J\n\tnow", kind="brief")
    assert d is not None and d.text == "\\x04rm -rf x\\x1b[2J now"
    assert rig.tmux.typed_into("%1") == ["\\x04rm -rf x\\x1b[2J now"]


def test_a_pane_in_copy_mode_is_not_typed_into_and_the_try_is_a_failed_attempt() -> None:
    """There every key is a copy-mode command; and a failed type is not a Typed row."""
    rig = Rig()
    rig.terminal()
    rig.tmux.panes["%1"] = dataclasses.replace(rig.tmux.panes["%1"], in_mode=True)
    d = rig.deliveries.queue("%1", "quick question")
    assert d is not None
    assert rig.tmux.typed == [] and rig.ledger.rows == []
    d = rig.deliveries.items[d.id]
    assert d.status is Status.PENDING and d.attempts == 1 and d.typed_at is None
    rig.run_for(RETRY_EVERY)
    assert rig.tmux.typed == [] and rig.ledger.rows == []
    rig.tmux.panes["%1"] = dataclasses.replace(rig.tmux.panes["%1"], in_mode=False)
    rig.run_for(RETRY_EVERY)
    assert rig.tmux.typed_into("%1") == ["quick question"]
    assert [r.badge.value for r in rig.ledger.rows] == ["Typed"]


def test_an_enter_due_while_the_pane_is_in_copy_mode_waits_for_it_to_end() -> None:
    rig = Rig()
    rig.terminal()
    assert rig.deliveries.queue("%1", "run the tests") is not None
    rig.tmux.panes["%1"] = dataclasses.replace(rig.tmux.panes["%1"], in_mode=True)
    rig.run_for(3.0)
    assert rig.tmux.enters("%1") == 0                    # Enter would copy, not submit
    rig.tmux.panes["%1"] = dataclasses.replace(rig.tmux.panes["%1"], in_mode=False)
    rig.run_for(1.5)
    assert rig.tmux.enters("%1") == 1
