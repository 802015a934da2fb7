"""`pitcrew hosts list|add|remove|check` as a user runs them, against a real sshd."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from tests.cli.test_autopilot_cli import pitcrew
from tests.support.sshd import RemoteTmuxServer, sshd_server


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
