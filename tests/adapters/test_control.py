"""The tmux control-mode watcher: output events, coalesced without losing a burst's end."""

from __future__ import annotations

import queue
import signal
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace

import pytest

from pitcrew.supervisor.adapters.control import (
    Activity,
    Attached,
    ControlClient,
    ControlGone,
    Output,
    Throttle,
    Topology,
)
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until


def test_throttle_sends_the_first_event_at_once_and_the_last_when_its_window_closes() -> None:
    t = Throttle(0.25)
    assert t.offer("%1", 10.0)
    assert not t.offer("%1", 10.05)
    assert not t.offer("%1", 10.10)
    assert t.offer("%2", 10.10)            # another pane has its own window
    assert t.wait(10.10) == pytest.approx(0.15)
    assert t.due(10.2) == []
    assert t.due(10.25) == [("%1", 10.10)]  # the burst's last output, when it happened
    assert t.wait(10.25) is None            # nothing pending: block until tmux says something
    assert not t.offer("%1", 10.3)
    assert t.flush() == [("%1", 10.3)]      # the client stopping still reports it
    assert t.due(100.0) == [] and t.wait(100.0) is None   # idle panes cost nothing


def test_output_right_after_output_is_reported_after_the_window(tmux: TmuxServer) -> None:
    """Typing a prompt and the CLI answering within the coalescing window used to leave the
    supervisor with only the first event: it read the typed draft and never the answer."""
    pane = tmux.start("exec cat")
    events: queue.Queue[object] = queue.Queue()
    client = ControlClient(tmux.tmux, tmux.pane(pane).session_name, events.put, coalesce=0.5)
    assert client.start_client()
    try:
        wait_until(lambda: tmux.tmux.capture(pane) is not None)
        tmux.type(pane, "first", enter=False)
        first = _next_output(events, pane)
        tmux.type(pane, "", enter=True)          # cat echoes the line: a second burst
        second = _next_output(events, pane)
        assert second.at > first.at
        tmux.wait_for_text(pane, "first\nfirst")
    finally:
        client.stop()


def _next_output(events: queue.Queue[object], pane: str) -> Output:
    while True:
        event = events.get(timeout=10)
        if isinstance(event, Output) and event.pane_id == pane:
            return event


@pytest.fixture
def watched(tmux: TmuxServer) -> Iterator[tuple[ControlClient, queue.Queue[object]]]:
    """A control client on the test server's first session (a shell in its newest pane)."""
    shell = tmux.start("bash --norc --noprofile")
    wait_until(lambda: tmux.pane(shell).current_command == "bash")
    events: queue.Queue[object] = queue.Queue()
    client = ControlClient(tmux.tmux, tmux._first_session(), events.put)
    assert client.start_client()
    try:
        yield client, events
    finally:
        client.stop()


def _within(events: queue.Queue[object], seconds: float,
            wanted: Callable[[object], bool]) -> object:
    """The first event `wanted` accepts, arriving within `seconds`; fails otherwise."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            event = events.get(timeout=left)
        except queue.Empty:
            break
        if wanted(event):
            return event
    raise AssertionError(f"no such event within {seconds}s")


def _drain(events: queue.Queue[object]) -> list[object]:
    out = []
    while not events.empty():
        out.append(events.get_nowait())
    return out


def test_a_new_window_is_reported_within_a_second(watched, tmux: TmuxServer) -> None:
    client, events = watched
    _drain(events)
    tmux.tmux.new_window(client.session, ["sleep", "300"], str(tmux.root))
    _within(events, 1.0, lambda e: isinstance(e, Topology) and e.session == client.session)


def test_a_new_session_is_reported_within_a_second(watched, tmux: TmuxServer) -> None:
    _, events = watched
    _drain(events)
    tmux.tmux.new_session("another", ["sleep", "300"], str(tmux.root))
    _within(events, 1.0, lambda e: isinstance(e, Topology))


def test_a_split_and_a_closed_window_are_reported(watched, tmux: TmuxServer) -> None:
    _, events = watched
    pane = tmux.start("exec sleep 300")
    _drain(events)
    tmux.tmux.run("split-window", "-d", "-t", pane, "sleep 300")
    _within(events, 1.0, lambda e: isinstance(e, Topology))
    _drain(events)
    tmux.tmux.kill_pane(pane)
    _within(events, 1.0, lambda e: isinstance(e, Topology))


def test_a_command_typed_at_an_existing_shell_is_reported(watched, tmux: TmuxServer) -> None:
    """The user types the agent at a pane's shell: no pane came or went, but it must be seen
    within about a second (the pane printed — the typing's echo here, an agent's first screen
    for real — so it is read, and again once its burst is over)."""
    _, events = watched
    shell = next(p.pane_id for p in tmux.tmux.list_panes() if p.current_command == "bash")
    tmux.type(shell, "exec sleep 300")
    # "about a second" is the benchmark's to time (bench/watch_cost.py); here only that it comes
    _within(events, 10, lambda e: isinstance(e, Topology) and e.pane_id == shell)


def test_panes_already_there_are_not_reported_as_changed(watched) -> None:
    _, events = watched
    with pytest.raises(AssertionError):
        _within(events, 1.5, lambda e: isinstance(e, Topology) and e.pane_id is not None)


def test_copy_mode_is_activity_not_a_pane_that_came_or_went(watched, tmux: TmuxServer) -> None:
    _, events = watched
    pane = tmux.tmux.list_panes()[-1].pane_id
    _drain(events)
    tmux.tmux.run("copy-mode", "-t", pane)
    _within(events, 2.0, lambda e: isinstance(e, Activity))
    assert not [e for e in _drain(events) if isinstance(e, Topology)]


def test_a_closed_session_is_gone_but_the_server_is_not(tmux: TmuxServer) -> None:
    tmux.start("exec sleep 300")
    tmux.tmux.new_session("short", ["sleep", "300"], str(tmux.root))
    events: queue.Queue[object] = queue.Queue()
    client = ControlClient(tmux.tmux, "short", events.put)
    assert client.start_client()
    try:
        tmux.tmux.run("kill-session", "-t", "=short")
        gone = _within(events, 5.0, lambda e: isinstance(e, ControlGone))
        assert gone == ControlGone("short", gone.reason, server_gone=False)
    finally:
        client.stop()


def test_the_server_going_away_is_reported_once(watched, tmux: TmuxServer) -> None:
    client, events = watched
    tmux.tmux.run("kill-server")
    gone = _within(events, 2.0, lambda e: isinstance(e, ControlGone))
    assert gone == ControlGone(client.session, gone.reason, server_gone=True)
    client.join(2)
    assert not any(isinstance(e, ControlGone) for e in _drain(events))


def test_the_client_is_attached_when_start_returns(tmux: TmuxServer) -> None:
    """tmux 3.2–3.6 crash when a notification reaches a control client that is still
    connecting: Pitcrew must not touch the server until its client is attached."""
    tmux.start("exec sleep 300")
    client = ControlClient(tmux.tmux, tmux._first_session(), lambda event: None)
    assert client.start_client()
    try:
        flags = tmux.tmux.run("list-clients", "-F", "#{client_flags}").stdout
        assert "control-mode" in flags and "attached" in flags
        # never read-only: tmux may pick it as the client a user's `send-keys` runs with
        # (tests/e2e/test_users_tmux_e2e.py), and never sized by
        assert "read-only" not in flags and "ignore-size" in flags
    finally:
        client.stop()


def test_attaching_names_the_panes_whose_earlier_output_it_did_not_see(
    tmux: TmuxServer
) -> None:
    """A session's client connects only once the server is quiet: what its panes printed
    before must be read once, or a screen that changed meanwhile is never looked at."""
    first = tmux.start("exec sleep 300")
    second = tmux.start("exec sleep 301")
    events: queue.Queue[object] = queue.Queue()
    client = ControlClient(tmux.tmux, tmux._first_session(), events.put)
    assert client.start_client()
    try:
        attached = _within(events, 5.0, lambda e: isinstance(e, Attached))
    finally:
        client.stop()
    assert isinstance(attached, Attached) and attached.session == tmux._first_session()
    assert {first, second} <= set(attached.panes)


def test_changing_the_server_right_after_connecting_does_not_crash_tmux(
        tmux: TmuxServer) -> None:
    """Before `start_client` waited, about one connect in fifty with a session created or
    closed at once killed the whole tmux server (`server exited unexpectedly`)."""
    tmux.start("exec sleep 300")
    for n in range(60):
        tmux.tmux.new_session(f"c{n}", ["sleep", "300"], str(tmux.root))
        client = ControlClient(tmux.tmux, f"c{n}", lambda event: None)
        assert client.start_client()
        tmux.tmux.new_session(f"d{n}", ["sleep", "300"], str(tmux.root))
        tmux.tmux.run("kill-session", "-t", f"=d{n}")
        client.stop()
    assert tmux.tmux.server_alive()


def test_attaching_leaves_the_sessions_environment_alone(
        tmux: TmuxServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watcher started from the desktop must not hand the user's ssh session its DISPLAY
    and SSH_AUTH_SOCK (tmux's `update-environment` does that for every attaching client)."""
    tmux.start("exec sleep 300")
    session = tmux._first_session()
    tmux.tmux.run("set-environment", "-t", session, "SSH_AUTH_SOCK", "/tmp/the-users-agent")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/pitcrews-own")
    client = ControlClient(tmux.tmux, session, lambda event: None)
    assert client.start_client()
    try:
        shown = tmux.tmux.run("show-environment", "-t", session, "SSH_AUTH_SOCK").stdout
        assert shown.strip() == "SSH_AUTH_SOCK=/tmp/the-users-agent"
    finally:
        client.stop()


def test_a_closed_session_does_not_crash_tmux_while_its_client_is_leaving(
        tmux: TmuxServer) -> None:
    """tmux before 3.7 crashed (the whole server) when an "all panes" subscription's timer
    fired after its client's session closed and before the client had gone. A client that
    is slow to leave (stopped here) made that certain."""
    tmux.start("exec sleep 300")
    tmux.tmux.new_session("short", ["sleep", "300"], str(tmux.root))
    events: queue.Queue[object] = queue.Queue()
    client = ControlClient(tmux.tmux, "short", events.put)
    assert client.start_client()
    assert client.proc is not None
    try:
        time.sleep(1.2)                      # as long as a subscription took to be checked
        client.proc.send_signal(signal.SIGSTOP)
        tmux.tmux.run("kill-session", "-t", "=short")
        time.sleep(1.5)                      # a subscription's timer fired once a second
        client.proc.send_signal(signal.SIGCONT)
        _within(events, 5.0, lambda e: isinstance(e, ControlGone))
        assert tmux.tmux.server_alive()
    finally:
        client.stop()


def test_a_command_typed_in_a_pane_opened_later_is_reported(watched, tmux: TmuxServer) -> None:
    """A pane that came after the client attached has no baseline to compare with: what it
    runs is news too."""
    client, events = watched
    pane = tmux.tmux.new_window(client.session, ["bash", "--norc", "--noprofile"],
                                str(tmux.root))
    wait_until(lambda: tmux.pane(pane).current_command == "bash")
    _drain(events)
    tmux.type(pane, "exec sleep 300")
    _within(events, 2.5, lambda e: isinstance(e, Topology) and e.pane_id == pane)


class _Stdin:
    def __init__(self) -> None:
        self.sent = b""

    def write(self, data: bytes) -> None:
        self.sent += data

    def flush(self) -> None:
        pass


def _offline(panes: dict[str, str]) -> tuple[ControlClient, list[object], _Stdin]:
    """A client fed tmux's lines by hand: what it asks tmux (`stdin.sent`), what it emits."""
    events: list[object] = []
    client = ControlClient(None, "work", events.append)   # type: ignore[arg-type]
    stdin = _Stdin()
    client.proc = SimpleNamespace(stdin=stdin)             # type: ignore[assignment]
    client._panes = dict(panes)
    return client, events, stdin


def test_an_attached_client_asks_tmux_for_nothing_while_no_pane_prints() -> None:
    """Idle costs nothing: a format subscription per pane (what Pitcrew sent here before)
    had tmux wake once a second per session and read every pane's command from /proc."""
    client, events, stdin = _offline({"%1": "10:0:bash", "%2": "11:0:fakeagent"})
    throttle, checks = Throttle(0.25), Throttle(1.0)
    assert client.handle_lines([b"%session-changed $1 work"], throttle, checks)
    assert events[0] == Attached("work", ("%1", "%2"))
    assert stdin.sent == b""
    assert checks.due(time.monotonic() + 60) == []


def test_a_pane_that_prints_is_read_and_a_changed_command_is_reported() -> None:
    client, events, stdin = _offline({"%1": "10:0:bash", "%2": "11:0:fakeagent"})
    throttle, checks = Throttle(0.25), Throttle(1.0)
    client.handle_lines([b"%session-changed $1 work"], throttle, checks)
    events.clear()
    client.handle_lines([b"%output %1 c", b"%output %1 l"], throttle, checks)
    assert stdin.sent.count(b"display-message") == 1 and b"-t %1 " in stdin.sent
    assert events == [Output("%1", events[0].at)]      # type: ignore[attr-defined]
    events.clear()
    reply = [b"%begin 1 2 1", b"pitcrew-pane %1 10:0:bash", b"%end 1 2 1"]
    client.handle_lines(reply, throttle, checks)
    assert events == []                                  # still the shell: nothing new
    client.handle_lines([b"pitcrew-pane %1 10:0:claude"], throttle, checks)
    assert events == [Topology("work", "%1")]
    client.handle_lines([b"pitcrew-pane %1 10:0:claude"], throttle, checks)
    client.handle_lines([b"pitcrew-pane %7 20:0:bash"], throttle, checks)   # opened since
    assert events == [Topology("work", "%1"), Topology("work", "%7")]
    assert checks.pending == {"%1": checks.pending["%1"]}   # read again once its burst ends
