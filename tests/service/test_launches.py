"""How agents were started survives a restart of Pitcrew (state.json's `extra.launch`)."""

from __future__ import annotations

from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.service import launches

CTX = LaunchContext(LaunchStyle.SHELL, 10, 1.0, 5, ("claude",), ("/usr/bin/claude",), "/w",
                    {"CLAUDE_CONFIG_DIR": "/cfg"}, shell_pid=5, shell_started=0.5,
                    shell_name="bash")


def test_launch_contexts_round_trip_through_state_json() -> None:
    assert launches.load({"s:%1": CTX.to_json()}) == {"s:%1": CTX}


def test_one_that_does_not_read_back_is_dropped_alone() -> None:
    loaded = launches.load({"s:%1": CTX.to_json(), "s:%2": {"style": "teleport"}, "s:%3": 5})
    assert list(loaded) == ["s:%1"]
    assert launches.load([1, 2]) == {} and launches.load(None) == {}
