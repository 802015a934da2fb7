"""Which tmux server this is, and whether a terminal is still the agent a decision was about."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.adapters.tmux import ServerIdentity
from pitcrew.supervisor.service.identity import ServerWatch
from tests.service.fakes import make_watched


class Probe:
    label = "test"

    def __init__(self) -> None:
        self.found: ServerIdentity | None = ServerIdentity("/tmp/s", 10, 100)

    def server_identity(self) -> ServerIdentity | None:
        return self.found


def test_a_restarted_server_is_a_different_server(caplog: pytest.LogCaptureFixture) -> None:
    probe = Probe()
    servers = ServerWatch(probe)
    servers.refresh()
    assert servers.ident == "10@100"
    w = make_watched(server="10@100")
    assert servers.changed_for(w, lambda pid, started: True) is None
    caplog.set_level(logging.INFO, "pitcrew")
    probe.found = None
    servers.refresh()
    assert "the tmux server test went away" in caplog.text
    probe.found = ServerIdentity("/tmp/s", 11, 200)        # the same socket, a new server
    why = servers.changed_for(w, lambda pid, started: True)
    assert why is not None and "tmux server was restarted" in why
    assert "running on test again" in caplog.text


def test_a_shell_started_agent_whose_shell_is_gone_is_not_that_terminal_any_more() -> None:
    servers = ServerWatch(Probe())
    w = make_watched(agent_pid=None)
    w.launch = LaunchContext(LaunchStyle.SHELL, 1, 1.0, 7, ("a",), ("a",), "/w", {},
                             shell_pid=7, shell_started=0.5)
    assert servers.changed_for(w, lambda pid, started: True) is None
    why = servers.changed_for(dataclasses.replace(w), lambda pid, started: False)
    assert why == "the shell the agent was started from is gone"
