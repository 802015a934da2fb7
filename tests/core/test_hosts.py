"""core/hosts.py: `[[hosts]]` tables, validated like the rest of config.toml."""

from __future__ import annotations

from pathlib import Path

from pitcrew.supervisor.core.hosts import Host, parse_hosts
from pitcrew.supervisor.store.config import load_config


def test_hosts_parse_and_each_bad_one_is_one_line_and_skipped() -> None:
    hosts, errors = parse_hosts([
        {"name": "gpu1", "ssh": "me@gpu1"},
        {"name": "vm", "ssh": "-J jump me@vm", "tmux_socket": "work", "enabled": False},
        {"name": "local", "ssh": "me@x"},
        {"name": "gpu1", "ssh": "me@other"},
        {"name": "x", "ssh": "-p 22"},
        {"name": "y", "ssh": "me@y", "port": 22},
        {"name": "z", "ssh": "me@z", "enabled": "yes"},
        "gpu2",
    ], "config.toml")
    assert hosts == (Host("gpu1", "me@gpu1"), Host("vm", "-J jump me@vm", "work", False))
    assert errors == [
        'config.toml: hosts[3]: name: "local" is this machine (it needs no entry)',
        "config.toml: hosts[4]: a host named 'gpu1' already exists",
        "config.toml: hosts[5]: ssh: '-p 22' names no host to connect to",
        "config.toml: hosts[6]: port: unknown key",
        "config.toml: hosts[7]: enabled: expected true or false, got 'yes'",
        "config.toml: hosts[8]: expected a table",
    ]


def test_config_toml_carries_hosts_and_reports_a_bad_one(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[[hosts]]\nname = "gpu1"\nssh = "me@gpu1"\n[[hosts]]\nname = "9"\n'
                    'ssh = "x"\n')
    loaded = load_config(path)
    assert loaded.config.hosts == (Host("gpu1", "me@gpu1"),)
    assert loaded.errors == ("config.toml: hosts[2]: name: expected a short name (a letter, "
                             "then letters, digits, - _ .), got '9'",)
    path.write_text("hosts = 3\n")
    assert load_config(path).errors == ("config.toml: hosts: expected [[hosts]] tables",)
