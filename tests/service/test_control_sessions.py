"""When a tmux session gets its control client (service/control_sessions.py): never in the
middle of a burst of changes, never while the session is still being built — tmux 3.2–3.6
crash when such changes reach a client still connecting. Driven by a hand-moved clock."""

from __future__ import annotations

from pitcrew.supervisor.service.control_sessions import MAX_WAIT, ControlSessions

NOW = 1_800_000_000.0     # wall clock at mono 0


class Client:
    def __init__(self, session: str) -> None:
        self.session, self.stopped = session, False

    def stop(self) -> None:
        self.stopped = True


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def mono(self) -> float:
        return self.t

    def wall(self) -> float:
        return NOW + self.t


def sessions(trust_created: bool = True, refuse: set[str] | None = None
             ) -> tuple[ControlSessions[Client], Clock, list[str]]:
    clock, connected = Clock(), []

    def connect(name: str) -> Client | None:
        if name in (refuse or set()):
            return None
        connected.append(name)
        return Client(name)
    return ControlSessions(connect, clock.mono, clock.wall, trust_created), clock, connected


OLD = int(NOW) - 3600


def test_sessions_there_at_the_start_are_connected_at_once() -> None:
    s, _, connected = sessions()
    s.sync({"work": OLD, "api": OLD})
    assert connected == ["api", "work"] and s.settled


def test_a_session_being_built_waits_until_it_is_three_seconds_old() -> None:
    s, clock, connected = sessions()
    s.sync({"work": OLD})
    clock.t = 10.0
    s.sync({"work": OLD, "proj": int(NOW + 9.0)})      # created a second ago
    assert connected == ["work"] and not s.settled      # the loop looks again every second
    clock.t = 11.5
    s.sync({"work": OLD, "proj": int(NOW + 9.0)})
    assert connected == ["work"]
    clock.t = 12.0
    s.sync({"work": OLD, "proj": int(NOW + 9.0)})
    assert connected == ["work", "proj"] and s.settled


def test_a_young_session_waits_even_at_the_start() -> None:
    """Pitcrew and a workspace script both started at login."""
    s, clock, connected = sessions()
    s.sync({"proj": int(NOW)})
    assert connected == [] and not s.settled
    clock.t = 3.0
    s.sync({"proj": int(NOW)})
    assert connected == ["proj"]


def test_no_new_client_while_tmux_keeps_reporting_changes() -> None:
    s, clock, connected = sessions()
    s.sync({"work": OLD})
    for step in range(1, 5):              # a script: a window, a split, a selection …
        clock.t = step * 0.5
        s.news()
        s.sync({"work": OLD, "old": OLD})
    assert connected == ["work"]
    clock.t += 0.9
    s.sync({"work": OLD, "old": OLD})
    assert connected == ["work"]
    clock.t += 0.2                        # a second of quiet
    s.sync({"work": OLD, "old": OLD})
    assert connected == ["work", "old"]


def test_a_server_that_never_goes_quiet_is_watched_after_max_wait() -> None:
    s, clock, connected = sessions()
    s.sync({"work": OLD})
    clock.t = 1.0
    while clock.t < 1.0 + MAX_WAIT:
        s.news()
        s.sync({"work": OLD, "busy": OLD})
        assert connected == ["work"]
        clock.t += 0.5
    s.news()
    s.sync({"work": OLD, "busy": OLD})
    assert connected == ["work", "busy"]


def test_a_closed_session_stops_its_client_and_a_client_that_ended_is_news() -> None:
    s, clock, connected = sessions()
    s.sync({"work": OLD, "api": OLD})
    api = s.controls["api"]
    s.sync({"work": OLD})
    assert api.stopped and set(s.controls) == {"work"}
    clock.t = 5.0
    s.gone("work")                        # its client ended by itself
    s.sync({"work": OLD})                 # a new session of the same name, say
    assert connected == ["api", "work"]
    clock.t = 6.0
    s.sync({"work": OLD})
    assert connected == ["api", "work", "work"]


def test_a_client_that_cannot_connect_is_tried_again_less_and_less_often() -> None:
    refuse = {"work"}
    s, clock, _ = sessions(refuse=refuse)
    tried: list[float] = []
    connect = s.connect

    def counted(name: str) -> Client | None:
        tried.append(clock.t)
        return connect(name)
    s.connect = counted
    for tick in range(70):                  # the loop lists every second while one waits
        clock.t = float(tick)
        s.sync({"work": OLD})
    assert tried == [0, 1, 3, 7, 15, 31, 61] and not s.settled   # then every 30 s
    refuse.clear()
    clock.t = 91.0
    s.sync({"work": OLD})
    assert s.settled and tried[-1] == 91
    s.sync({})                              # closed: its failures are forgotten too
    assert s.failed == {}
    refuse.add("work")
    s.failed["work"] = (5000, 0.0)          # days of failures: still 30 s apart, no overflow
    clock.t = 200.0
    s.sync({"work": OLD})                   # back in the listing: news, so not yet
    clock.t = 202.0
    s.sync({"work": OLD})
    assert s.failed["work"] == (5001, 232.0)


def test_on_another_hosts_clock_a_session_is_young_by_when_it_was_first_listed() -> None:
    s, clock, connected = sessions(trust_created=False)
    s.sync({"work": int(NOW - 7200)})     # its creation time says old: not on our clock
    clock.t = 2.9
    s.sync({"work": 0})
    assert connected == []
    clock.t = 3.0
    s.sync({"work": 0})
    assert connected == ["work"]


def test_a_host_back_after_a_drop_waits_as_if_its_sessions_were_new() -> None:
    """Its sessions' age cannot be told, and one may be being built right now."""
    s, clock, connected = sessions(trust_created=False)
    s.sync({"work": 0})
    clock.t = 3.0
    s.sync({"work": 0})
    client = s.controls["work"]
    clock.t = 30.0
    s.stop()
    assert client.stopped and not s.settled
    s.sync({"work": 0, "api": 0})
    assert connected == ["work"]
    clock.t = 33.0
    s.sync({"work": 0, "api": 0})
    assert connected == ["work", "api", "work"]


def test_one_session_being_built_holds_back_every_new_client() -> None:
    """Pitcrew and a workspace script started together: the script's notifications reach
    a client connecting to any session, not only to the one it builds."""
    s, clock, connected = sessions()
    s.sync({"old": OLD, "proj": int(NOW)})
    assert connected == []
    clock.t = 3.0
    s.sync({"old": OLD, "proj": int(NOW)})
    assert connected == ["old", "proj"]


def test_sessions_coming_or_going_in_a_listing_are_news_without_any_client() -> None:
    s, clock, connected = sessions(refuse={"work"})
    s.sync({"work": OLD})
    clock.t = 5.0
    s.sync({"work": OLD, "other": OLD})   # no client heard it: the listing did
    assert connected == []
    clock.t = 6.0
    s.sync({"work": OLD, "other": OLD})
    assert connected == ["other"]


def test_stopping_a_client_is_news() -> None:
    """tmux tells every client that one detached: a session renamed stops the client of
    its old name, and the new name must not connect in the same breath."""
    s, clock, connected = sessions()
    s.sync({"work": OLD})
    clock.t = 10.0
    s.sync({"renamed": OLD})
    assert connected == ["work"] and s.controls == {}
    clock.t = 11.0
    s.sync({"renamed": OLD})
    assert connected == ["work", "renamed"]


def test_news_during_a_slow_connect_holds_back_the_next_one() -> None:
    clock = Clock()
    s: ControlSessions[Client]

    def connect(name: str) -> Client:
        clock.t += 0.5                    # attaching takes a while; tmux reports a change
        s.news()
        return Client(name)
    s = ControlSessions(connect, clock.mono, clock.wall)
    s.sync({"a": OLD, "b": OLD})
    assert set(s.controls) == {"a"} and s.waiting == {"b"}


def test_no_session_is_not_settled() -> None:
    s, _, _ = sessions()
    s.sync({})
    assert not s.settled                  # nothing tells of a first session: keep looking
