"""`pitcrew scan` over a recording tmux: which panes are agent terminals, and what they show.

A live pane's agent is found by walking its real process tree (`adapters.processes`; the
module takes no finder to inject), so these tests use dead panes — found from their start
command — and a live pane whose pid runs nothing."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from pitcrew import resources
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.providers.loader import load_registry
from pitcrew.supervisor.providers.model import DeferredScreen
from pitcrew.supervisor.service.scan import scan
from tests.service.fakes import FAKE_AGENT_DIR, LIMIT, T0, RecordingTmux, registry

NOW = dt.datetime.fromtimestamp(T0, dt.UTC)
NO_SUCH_PID = 4_194_304 + 4242     # above any Linux pid_max: no process has it
CRASH = "● Working…\nfatal: simulated crash (exit 3)\n\nPane is dead (status 3, Mon Dec  1)"


@pytest.fixture(autouse=True)
def fake_agent_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake agent's session files live here, never in the real home."""
    home = tmp_path / "fakeagent-home"
    monkeypatch.setenv("FAKEAGENT_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path))
    return home


def dead_agent(tmux: RecordingTmux, pane_id: str = "%1", screen: str = CRASH,
               command: str = "fakeagent --resume 0b7c") -> None:
    tmux.add(pane_id, screen=screen, dead=True, dead_status=3, pid=NO_SUCH_PID,
             command=command, height=30)


def test_a_dead_agent_pane_is_found_from_its_start_command_and_reads_as_crashed() -> None:
    tmux = RecordingTmux()
    dead_agent(tmux)
    [t] = scan(tmux, registry(), NOW, dt.UTC)  # type: ignore[arg-type]
    assert (t.server, t.pane_id, t.target, t.provider, t.display_name) == (
        "test", "%1", "work:1.1", "fakeagent", "Fake Agent")
    assert t.dead and t.dead_status == 3 and t.agent_pid is None
    assert t.state == "crashed"
    assert tmux.calls[-1] == ("capture", ("%1", 30))      # its last words, from history


def test_its_session_is_read_from_the_agents_own_files(fake_agent_home: Path) -> None:
    folder = fake_agent_home / "sessions" / "-work-api"
    folder.mkdir(parents=True)
    (folder / "0b7c.jsonl").write_text(
        json.dumps({"type": "session", "id": "0b7c", "cwd": "/work/api"}) + "\n")
    tmux = RecordingTmux()
    dead_agent(tmux)
    [t] = scan(tmux, registry(), NOW, dt.UTC)  # type: ignore[arg-type]
    assert t.session_id == "0b7c" and t.session_file == str(folder / "0b7c.jsonl")
    assert t.to_json()["session_id"] == "0b7c"


def test_panes_without_an_agent_are_not_terminals() -> None:
    tmux = RecordingTmux()
    dead_agent(tmux, "%1", command="bash")                 # a shell that ended
    tmux.add("%2", pid=NO_SUCH_PID, command="bash")        # a pane whose process is gone
    assert scan(tmux, registry(), NOW, dt.UTC) == []  # type: ignore[arg-type]


def test_only_the_screens_of_the_agents_found_are_compiled() -> None:
    fresh = load_registry(resources.providers_dir(), FAKE_AGENT_DIR)
    tmux = RecordingTmux()
    dead_agent(tmux, "%1")
    tmux.add("%2", pid=NO_SUCH_PID, command="bash")
    scan(tmux, fresh, NOW, dt.UTC)  # type: ignore[arg-type]
    assert [p.name for p in fresh
            if isinstance(p.screen_rules, DeferredScreen) and p.screen_rules.built] == [
        "fakeagent"]


def test_without_screens_nothing_is_captured() -> None:
    tmux = RecordingTmux()
    dead_agent(tmux, screen=LIMIT)
    [t] = scan(tmux, registry(), NOW, dt.UTC, read_screens=False)  # type: ignore[arg-type]
    assert t.screen is None and t.state == ScreenState.UNKNOWN.value
    assert tmux.captures["%1"] == 0


def test_a_pane_that_vanishes_before_its_capture_is_left_out() -> None:
    class Vanishing(RecordingTmux):
        def capture(self, pane_id: str, history: int = 0) -> str | None:
            return None

    tmux = Vanishing()
    dead_agent(tmux)
    assert scan(tmux, registry(), NOW, dt.UTC) == []  # type: ignore[arg-type]


def test_to_json_names_every_field() -> None:
    tmux = RecordingTmux()
    dead_agent(tmux)
    [t] = scan(tmux, registry(), NOW, dt.UTC)  # type: ignore[arg-type]
    data = t.to_json()
    assert data["pane"] == "%1" and data["provider"] == "fakeagent" and data["dead"] is True
    assert data["screen"]["state"] == "crashed"  # type: ignore[index]
