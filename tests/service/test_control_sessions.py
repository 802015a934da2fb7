"""When a tmux session gets its control client (service/control_sessions.py): never in the
middle of a burst of changes, never while the session is still being built — tmux 3.3a–3.7
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


def test_a_client_that_cannot_connect_is_tried_again() -> None:
    refuse = {"work"}
    s, clock, connected = sessions(refuse=refuse)
    s.sync({"work": OLD})
    assert connected == [] and not s.settled
    refuse.clear()
    clock.t = 1.0
    s.sync({"work": OLD})
    assert connected == ["work"] and s.settled


def test_on_another_hosts_clock_a_session_is_young_by_when_it_was_first_listed() -> None:
    s, clock, connected = sessions(trust_created=False)
    s.sync({"work": int(NOW + 500)})      # there before us: its clock is ahead, no matter
    assert connected == ["work"]
    clock.t = 10.0
    s.sync({"work": 0, "proj": int(NOW - 7200)})   # behind: it would look old
    clock.t = 12.9
    s.sync({"work": 0, "proj": 0})
    assert connected == ["work"]
    clock.t = 13.0
    s.sync({"work": 0, "proj": 0})
    assert connected == ["work", "proj"]


def test_stop_stops_every_client_and_a_host_back_after_a_drop_connects_at_once() -> None:
    s, clock, connected = sessions(trust_created=False)
    s.sync({"work": 0})
    client = s.controls["work"]
    clock.t = 30.0
    s.stop()
    assert client.stopped and not s.settled
    clock.t = 60.0
    s.sync({"work": 0, "api": 0})
    assert connected == ["work", "api", "work"]


def test_no_session_is_not_settled() -> None:
    s, _, _ = sessions()
    s.sync({})
    assert not s.settled                  # nothing tells of a first session: keep looking
