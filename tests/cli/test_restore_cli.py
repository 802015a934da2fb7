"""`pitcrew restore` as a user runs it, around the edges the end-to-end test does not cover:
no record, a corrupt record, an unknown session (tests/e2e/test_restore_e2e.py does the rest)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_cli import pitcrew
from tests.support.tmux_server import TmuxServer


def test_with_no_record_there_is_nothing_to_restore(pitcrew_home: Path, tmux: TmuxServer) -> None:
    out = pitcrew("restore", "--dry-run", env={"PITCREW_TMUX_SOCKET": tmux.name})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Nothing to restore: Pitcrew has no record of agents")
    assert not tmux.tmux.server_alive()          # nothing was started, not even a server


def test_a_corrupt_record_is_one_line_never_a_traceback_and_is_kept(
        pitcrew_home: Path, tmux: TmuxServer) -> None:
    record = pitcrew_home / "fleet.json"
    record.write_text('{"version": 1, "sockets": {"x": [{"session": 3}]}}')
    out = pitcrew("restore", env={"PITCREW_TMUX_SOCKET": tmux.name})
    assert out.returncode != 0 and "Traceback" not in out.stderr
    [line] = out.stderr.splitlines()
    assert "fleet.json: unreadable" in line and "nothing restored" in line
    assert record.exists()


def test_a_session_with_nothing_recorded_is_named(pitcrew_home: Path, tmux: TmuxServer) -> None:
    out = pitcrew("restore", "nosuch", env={"PITCREW_TMUX_SOCKET": tmux.name})
    assert out.returncode != 0
    assert "no agents from before the restart in session(s) 'nosuch'" in out.stderr


def test_help_names_the_plan_and_dry_run() -> None:
    out = pitcrew("restore", "--help")
    assert out.returncode == 0 and "--dry-run" in out.stdout and "SESSION" in out.stdout
