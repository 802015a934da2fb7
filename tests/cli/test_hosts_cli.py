"""`pitcrew hosts list|add|remove|check` as a user runs them, against a real sshd."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from pitcrew.supervisor.store.config import load_config
from tests.cli.test_autopilot_cli import pitcrew
from tests.support.sshd import RemoteTmuxServer, sshd_server
from tests.support.tmux_server import TmuxServer


def test_add_list_check_and_remove_a_host(pitcrew_home: Path, tmp_path: Path) -> None:
    config = pitcrew_home / "config.toml"
    config.write_text("# mine\n[autopilot]\nenabled = true   # keep\n")
    with sshd_server(tmp_path / "sshd") as sshd:
        remote = RemoteTmuxServer(sshd, tmp_path / "remote")
        try:
            remote.start("sleep 600")
            out = pitcrew("hosts", "add", "gpu1", sshd.ssh_spec, "--tmux-socket", remote.socket)
            assert out.returncode == 0, out.stderr
            data = tomllib.loads(config.read_text())
            assert data["hosts"] == [{"name": "gpu1", "ssh": sshd.ssh_spec,
                                      "tmux_socket": remote.socket}]
            assert "enabled = true   # keep" in config.read_text()     # the rest untouched
            pitcrew("hosts", "add", "cold", "-F /dev/null nowhere.invalid", "--disabled")
            listed = pitcrew("hosts", "list").stdout.splitlines()
            assert listed[0].split() == ["NAME", "SSH", "TMUX", "ENABLED"]
            assert listed[1].startswith("local") and listed[3].split()[-1] == "no"
            out = pitcrew("hosts", "check", "gpu1")
            assert out.returncode == 0, out.stderr
            assert out.stdout.startswith("gpu1: up · tmux 3.") and \
                "1 session(s), 2 pane(s)" in out.stdout
            sshd.stop()
            out = pitcrew("hosts", "check", "gpu1", "--json")
            [result] = json.loads(out.stdout)
            assert out.returncode == 1 and result["state"] == "down" and result["error"]
            sshd.start()
        finally:
            remote.stop()
    assert pitcrew("hosts", "remove", "gpu1").returncode == 0
    assert [h["name"] for h in tomllib.loads(config.read_text())["hosts"]] == ["cold"]
    assert config.read_text().startswith("# mine\n[autopilot]\nenabled = true   # keep\n")


def test_bad_host_input_is_one_line(pitcrew_home: Path) -> None:
    for args, said in [(("hosts", "add", "local", "me@x"), "is this machine"),
                       (("hosts", "add", "gpu1"), "usage: pitcrew hosts add"),
                       (("hosts", "remove", "nope"), "no host named 'nope'"),
                       (("hosts", "check", "nope"), "no host named 'nope'")]:
        out = pitcrew(*args)
        assert out.returncode == 2 and said in out.stderr, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    (pitcrew_home / "config.toml").write_text('[[hosts]]\nname = "x"\nssh = 5\n')
    out = pitcrew("hosts", "list")
    assert out.returncode == 0 and "x" not in out.stdout.split()    # a bad entry is skipped


def test_status_shows_the_host_of_each_terminal_and_a_host_that_is_down(
        pitcrew_home: Path, fake_provider_installed: Path, tmux: TmuxServer,
        tmp_path: Path) -> None:
    local = tmux.start("fakeagent", cwd=tmp_path)
    tmux.wait_for_text(local, "fake>")
    env = {"PITCREW_TMUX_SOCKET": tmux.name}
    with sshd_server(tmp_path / "sshd") as sshd:
        remote = RemoteTmuxServer(sshd, tmp_path / "remote")
        try:
            pane = remote.start("fakeagent", cwd=tmp_path)
            remote.wait_for_text(pane, "fake>")
            (pitcrew_home / "config.toml").write_text(
                f'[[hosts]]\nname = "gpu1"\nssh = "{sshd.ssh_spec}"\n'
                f'tmux_socket = "{remote.socket}"\n'
                '[[hosts]]\nname = "gone"\nssh = "-F /dev/null -p 1 127.0.0.1"\n')
            lines = pitcrew("status", env=env).stdout.splitlines()
            assert lines[0].split()[:3] == ["HOST", "PANE", "TARGET"]
            assert lines[1].split()[:3] == ["local", local, tmux.pane(local).target]
            assert lines[2].split()[:3] == ["gpu1", f"gpu1:{pane}", "gpu1:work:1.0"]
            assert lines[2].split()[5] == "idle"
            assert lines[3].startswith("gone: down · ")
            data = json.loads(pitcrew("status", "--json", "--host", "gpu1", env=env).stdout)
            [only] = data["terminals"]
            assert only["host"] == "gpu1" and only["pane"] == f"gpu1:{pane}"
            [session] = list(remote.fake_home.rglob("*.jsonl"))
            assert only["session_id"] == session.stem and only["cwd"] == str(tmp_path)
            assert data["hosts"] == [{"name": "gpu1", "state": "up", "error": None,
                                      "server_running": True}]
            data = json.loads(pitcrew("status", "--json", "--host", "local", env=env).stdout)
            assert [t["pane"] for t in data["terminals"]] == [local]
            assert "host" not in data["terminals"][0]          # local rows as before
        finally:
            remote.stop()
    out = pitcrew("status", "--host", "nope", env=env)
    assert out.returncode == 2 and out.stderr.strip() == \
        "pitcrew: no host named 'nope' (see `pitcrew hosts list`)"


def test_launch_opens_a_seat_with_a_host_on_that_host(
        pitcrew_home: Path, fake_provider_installed: Path, tmp_path: Path) -> None:
    project = tmp_path / "api"
    project.mkdir()
    with sshd_server(tmp_path / "sshd") as sshd:
        remote = RemoteTmuxServer(sshd, tmp_path / "remote")
        try:
            remote.start("sleep 600")
            (pitcrew_home / "config.toml").write_text(
                f'[[seats]]\nname = "api"\ncwd = "{project}"\nprimary = "fakeagent"\n'
                'host = "gpu1"\n[[seats]]\nname = "web"\ncwd = "/"\nprimary = "fakeagent"\n'
                'host = "nowhere"\n'
                f'[[hosts]]\nname = "gpu1"\nssh = "{sshd.ssh_spec}"\n'
                f'tmux_socket = "{remote.socket}"\n')
            out = pitcrew("launch", "api")
            assert out.returncode == 0, out.stderr
            loaded = load_config(pitcrew_home / "config.toml")      # that seat is skipped
            assert [s.name for s in loaded.config.seats] == ["api"] and loaded.errors == (
                "config.toml: seats: web: host: no host named 'nowhere' in [[hosts]]; the "
                "seat is skipped",)
            pane = out.stdout.split("(")[-1].rstrip(").\n")
            assert out.stdout.startswith("Launched Fake Agent for seat api on gpu1 in api")
            assert pane.startswith("gpu1:%")
            remote.wait_for_text(pane.removeprefix("gpu1:"), "fake>")
            listed = remote.tmux("list-panes", "-a", "-F",
                                 "#{pane_id} #{session_name} #{pane_current_path}").stdout
            assert f"{pane.removeprefix('gpu1:')} api {project}" in listed
            spooled = (pitcrew_home / "commands.jsonl").read_text()
            assert pane in spooled                                    # bound to the seat
        finally:
            remote.stop()
