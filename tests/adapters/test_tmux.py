"""The tmux adapter against a real, isolated tmux server."""

from __future__ import annotations

import time

import psutil
import pytest

from pitcrew.supervisor.adapters.tmux import Tmux
from pitcrew.supervisor.core.errors import TmuxError, TmuxNotFound
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until


def test_lists_every_pane_with_pid_path_and_command(tmux: TmuxServer, tmp_path) -> None:
    work = tmp_path / "proj with space"
    work.mkdir()
    pane = tmux.start("exec sleep 300", cwd=work)
    info = wait_until(lambda: (p := tmux.tmux.pane(pane)) and p.current_command == "sleep" and p)
    assert info.pane_id == pane
    assert info.current_path == str(work)
    assert info.pid > 0 and not info.dead
    assert info.target.startswith(info.session_name + ":")
    assert pane in {p.pane_id for p in tmux.tmux.list_panes()}
    assert 0 <= time.time() - info.session_created < 60   # a young session waits for its client


def test_dead_pane_keeps_its_exit_status(tmux: TmuxServer) -> None:
    pane = tmux.start("sleep 0.3; exit 3")
    info = wait_until(lambda: (p := tmux.tmux.pane(pane)) and p.dead_status is not None and p,
                      message="pane to die with a status")
    assert info.dead
    assert info.dead_status == 3
    assert info.start_path  # the dead pane still says where it ran


def test_killed_pane_reports_the_signal(tmux: TmuxServer) -> None:
    import os
    import signal

    pane = tmux.start("exec sleep 300")
    pid = tmux.pane(pane).pid
    os.kill(pid, signal.SIGTERM)
    info = wait_until(lambda: (p := tmux.tmux.pane(pane)) and p.dead and p)
    wait_until(lambda: tmux.tmux.pane(pane).dead_signal == signal.SIGTERM)
    assert info.dead


def test_capture_shows_the_visible_screen_and_history(tmux: TmuxServer) -> None:
    pane = tmux.start("seq 1 200; exec sleep 300", height=20)
    tmux.wait_for_text(pane, "200")
    screen = tmux.tmux.capture(pane)
    assert screen is not None
    lines = [x for x in screen.splitlines() if x.strip()]
    assert lines[-1] == "200" and "1" not in lines[:1]
    longer = tmux.tmux.capture(pane, history=100) or ""
    assert len(longer.splitlines()) > len(screen.splitlines())


def test_send_text_is_literal_and_never_presses_enter(tmux: TmuxServer) -> None:
    pane = tmux.start("exec cat")
    tricky = "echo $(whoami); {braces} ; C-c Enter"
    tmux.tmux.send_text(pane, tricky)
    tmux.wait_for_text(pane, tricky)
    # cat echoes a line only after Enter: nothing beyond the typed text yet
    assert tmux.screen(pane).count(tricky) == 1
    tmux.tmux.send_keys(pane, "Enter")
    wait_until(lambda: tmux.screen(pane).count(tricky) == 2)


@pytest.mark.parametrize("key", ["\x04", "\x03", "\x15", "\x1b[2J", "\x7f", "\u009b", "\x00"])
def test_send_text_refuses_a_control_character_and_types_nothing(
        tmux: TmuxServer, key: str) -> None:
    """`-l` does not make a control character text: `cat` would get Ctrl-D and end."""
    pane = tmux.start("exec cat")
    with pytest.raises(TmuxError, match="control character"):
        tmux.tmux.send_text(pane, f"{key}echo pwned")
    time.sleep(0.3)
    assert "pwned" not in tmux.screen(pane) and not tmux.pane(pane).dead


def test_remain_on_exit_set_by_pitcrew_keeps_the_pane(tmux: TmuxServer) -> None:
    pane = tmux.start("exec sleep 300", keep_dead=False)
    tmux.tmux.set_remain_on_exit(pane)
    import os
    import signal

    os.kill(tmux.pane(pane).pid, signal.SIGKILL)
    info = wait_until(lambda: (p := tmux.tmux.pane(pane)) and p.dead and p)
    assert info.pane_id == pane


def test_respawn_replaces_the_dead_process(tmux: TmuxServer) -> None:
    pane = tmux.start("exit 1")
    wait_until(lambda: tmux.pane(pane).dead)
    old = tmux.pane(pane).pid
    tmux.tmux.respawn(pane, ["sh", "-c", "echo again; exec sleep 300"])
    tmux.wait_for_text(pane, "again")
    info = tmux.pane(pane)
    assert not info.dead and info.pid != old


def test_exact_session_names_never_match_a_prefix(tmux: TmuxServer) -> None:
    tmux.start("exec sleep 300")
    name = tmux._first_session()
    assert tmux.tmux.has_session(name)
    assert not tmux.tmux.has_session(name[:-1])


def test_reads_are_lenient_when_no_server_runs() -> None:
    gone = Tmux("pitcrew-test-never-started", config_file="/dev/null")
    assert gone.list_panes() == []
    assert gone.capture("%1") is None
    assert not gone.server_alive()


def test_writes_to_a_missing_pane_raise_with_tmux_words(tmux: TmuxServer) -> None:
    tmux.start("exec sleep 300")
    with pytest.raises(TmuxError, match="send-keys failed"):
        tmux.tmux.send_text("%999", "hello")


def test_missing_binary_is_a_clear_error() -> None:
    with pytest.raises(TmuxNotFound, match="tmux is not installed"):
        Tmux("x", binary="tmux-does-not-exist").run("list-sessions")


def test_every_short_lived_pane_reports_its_exit_status(tmux: TmuxServer) -> None:
    """tmux 3.3a can miss a pane's SIGCHLD; the adapter makes it reap (regression test)."""
    panes = {tmux.start(f"sleep 0.{i % 3 + 1}; exit {i}"): i for i in range(1, 13)}
    for pane, code in panes.items():
        info = wait_until(lambda p=pane: (x := tmux.tmux.pane(p)) and x.dead and x, timeout=15)
        assert tmux.tmux.pane(pane).dead_status == code, info


def test_respawn_runs_in_the_given_cwd_with_the_given_environment(tmux: TmuxServer,
                                                                  tmp_path) -> None:
    work = tmp_path / "work dir"
    work.mkdir()
    pane = tmux.start("exit 1")
    wait_until(lambda: tmux.pane(pane).dead)
    env = {"TOY_MARK": "a b;c", "PATH": "/opt/pitcrew-test/bin:/usr/bin:/bin"}
    tmux.tmux.respawn(pane, ["sh", "-c", 'echo "[$TOY_MARK|$PATH|$(pwd)]"; exec sleep 300'],
                      cwd=str(work), env=env)
    tmux.wait_for_text(pane, f"[a b;c|/opt/pitcrew-test/bin:/usr/bin:/bin|{work}]")


def test_respawn_never_kills_a_running_pane_unless_asked(tmux: TmuxServer) -> None:
    pane = tmux.start("exec sleep 300")
    old = tmux.pane(pane).pid
    with pytest.raises(TmuxError, match="respawn-pane failed"):
        tmux.tmux.respawn(pane, ["sleep", "301"])
    assert tmux.pane(pane).pid == old
    tmux.tmux.respawn(pane, ["sh", "-c", "echo killed; exec sleep 300"], kill=True)
    tmux.wait_for_text(pane, "killed")
    assert tmux.pane(pane).pid != old


def test_kill_pane_removes_it(tmux: TmuxServer) -> None:
    pane = tmux.start("exec sleep 300")
    tmux.tmux.kill_pane(pane)
    wait_until(lambda: tmux.tmux.pane(pane) is None)


def test_panes_report_their_cursor_and_tty(tmux: TmuxServer) -> None:
    pane = tmux.start("printf 'abc'; exec sleep 300")
    info = wait_until(lambda: (p := tmux.pane(pane)).cursor_x == 3 and p)
    assert info.cursor_y == 0
    assert info.tty.startswith("/dev/")


def test_a_snapshot_reads_the_cursor_and_the_text_of_one_moment(tmux: TmuxServer) -> None:
    """A pane printing without pause: in every snapshot, the cursor sits right after the
    text of its row (read by two commands, it never did: the text had moved on)."""
    pane = tmux.start("i=0; while :; do printf x; i=$((i+1)); "
                      "if [ $i -ge 100 ]; then printf '\\n'; i=0; fi; done")
    wait_until(lambda: "xxx" in (tmux.tmux.capture(pane) or ""))
    for _ in range(30):
        snap = tmux.tmux.snapshot(pane)
        assert snap is not None
        info, text = snap
        row = text.split("\n")[info.cursor_y]
        assert info.pane_id == pane and len(row.rstrip()) == info.cursor_x, (info, row)
    tmux.tmux.kill_pane(pane)
    assert tmux.tmux.snapshot(pane) is None


def test_a_tmux_without_list_panes_filters_is_read_in_two_commands(tmux: TmuxServer) -> None:
    class Tmux31(Tmux):          # tmux before 3.2: `list-panes -f` is an unknown flag
        def run(self, *args: str, path: str | None = None):  # type: ignore[no-untyped-def]
            return super().run(*(a if a != "-f" else "-Z" for a in args), path=path)

    pane = tmux.start("echo hello; exec sleep 300")
    old = Tmux31(tmux.name, config_file="/dev/null")
    wait_until(lambda: "hello" in (old.capture(pane) or ""))
    snap = old.snapshot(pane)
    assert snap is not None and snap[0].pane_id == pane and "hello" in snap[1]
    assert not old.filters                  # not tried again


def test_server_identity_changes_when_the_server_restarts(tmux: TmuxServer) -> None:
    assert tmux.tmux.server_identity() is None
    tmux.start("exec sleep 300")
    first = tmux.tmux.server_identity()
    assert first is not None
    assert first.socket_path.endswith("/" + tmux.name)
    assert psutil.Process(first.pid).name() == "tmux: server"
    assert abs(first.started - psutil.Process(first.pid).create_time()) <= 2
    tmux.tmux.run("kill-server")
    wait_until(lambda: tmux.tmux.server_identity() is None)
    tmux.start("exec sleep 300")
    second = tmux.tmux.server_identity()
    assert second is not None and second != first
    assert second.socket_path == first.socket_path


def test_a_pane_in_copy_mode_says_so(tmux: TmuxServer) -> None:
    pane = tmux.start("exec sleep 300")
    assert not tmux.pane(pane).in_mode
    tmux.tmux.run("copy-mode", "-t", pane)
    wait_until(lambda: tmux.pane(pane).in_mode)


def test_an_environment_passed_to_tmux_never_reaches_the_log(tmux: TmuxServer, caplog) -> None:
    pane = tmux.start("exit 1")
    wait_until(lambda: tmux.pane(pane).dead)
    with caplog.at_level("DEBUG", logger="pitcrew.supervisor.adapters.tmux"):
        tmux.tmux.respawn(pane, ["sleep", "300"], env={"API_KEY": "sk-secret-value"})
    logged = [" ".join(r.tmux_cmd) for r in caplog.records if hasattr(r, "tmux_cmd")]
    assert any("API_KEY=" in line for line in logged)
    assert not any("sk-secret-value" in line for line in logged)
