"""`pitcrew send` and `pitcrew seat bind`: a terminal is resolved when the user names it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.test_autopilot_cli import pitcrew
from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until


def spooled(home: Path) -> list[dict[str, Any]]:
    path = home / "commands.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_send_without_a_tmux_server_says_so_and_queues_nothing(pitcrew_home: Path) -> None:
    out = pitcrew("--tmux-socket", "pitcrew-test-absent", "send", "%99", "hi")
    assert out.returncode == 2
    assert out.stderr == ("pitcrew: no agent terminal %99: no tmux server is running "
                          "(pitcrew-test-absent); nothing queued (--wait queues it for a "
                          "terminal that is not there yet)\n")
    assert out.stdout == "" and spooled(pitcrew_home) == []


def test_send_resolves_every_form_status_prints_to_the_terminal_key(
    tmux: TmuxServer, pitcrew_home: Path, fake_provider_installed: Path
) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    [row] = json.loads(pitcrew("--tmux-socket", tmux.name, "status", "--json").stdout)[
        "terminals"]
    key = f"{tmux.name}:{pane}"
    session = row["target"].partition(":")[0]
    for ref in (pane, row["target"], session, key):
        out = pitcrew("--tmux-socket", tmux.name, "send", ref, "hello")
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith(f"Queued for {ref} ({key}): ")
        assert spooled(pitcrew_home)[-1]["send"]["terminal"] == key
    record = spooled(pitcrew_home)[-1]["send"]
    assert set(record) == {"id", "terminal", "text", "wait"} and record["text"] == "hello"
    shell = f"{session}:0.0"                      # the first pane: a `sleep`, not an agent
    for ref in ("%99", shell, "nosuch", f"other:{pane}"):
        out = pitcrew("--tmux-socket", tmux.name, "send", ref, "hello")
        assert out.returncode == 2, ref
        assert out.stderr.startswith(f"pitcrew: no agent terminal {ref} on tmux server "
                                     f"{tmux.name} (see `pitcrew status`); nothing queued")
        assert len(out.stderr.splitlines()) == 1
    assert len(spooled(pitcrew_home)) == 4


def test_send_wait_queues_for_a_pane_that_is_not_there_yet(
    tmux: TmuxServer, pitcrew_home: Path
) -> None:
    tmux.start("exec sleep 300")
    out = pitcrew("--tmux-socket", tmux.name, "send", "--wait", "%99", "later")
    assert out.returncode == 0, out.stderr
    assert spooled(pitcrew_home)[-1]["send"]["terminal"] == f"{tmux.name}:%99"
    out = pitcrew("--tmux-socket", tmux.name, "send", "--wait", "work:3.1", "later")
    assert out.returncode == 2
    assert "--wait needs a pane id (%3) or terminal key" in out.stderr
    assert len(spooled(pitcrew_home)) == 1


def test_a_message_sent_to_the_target_status_prints_is_typed(
    tmux: TmuxServer, pitcrew_home: Path, fake_provider_installed: Path
) -> None:
    (pitcrew_home / "config.toml").write_text("[watch]\npoll_interval = 0.5\n")
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    target = tmux.pane(pane).target
    watch = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name})
    try:
        watch.wait_for(f"{pane}: idle")
        out = pitcrew("send", target, "say hello there", env={"PITCREW_TMUX_SOCKET": tmux.name})
        assert out.returncode == 0, out.stderr
        watch.wait_for(f"{tmux.name}:{pane}: typed a queued message")
        wait_until(lambda: "say hello there" in tmux.screen(pane), 15)
    finally:
        watch.stop()
    assert not watch.saw("cannot send to")


def test_seat_bind_uses_the_same_resolver(
    tmux: TmuxServer, pitcrew_home: Path, fake_provider_installed: Path, tmp_path: Path
) -> None:
    (pitcrew_home / "config.toml").write_text(
        f'[[seats]]\nname = "api"\ncwd = "{tmp_path}"\nprimary = "fakeagent"\n')
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    target = tmux.pane(pane).target
    out = pitcrew("--tmux-socket", tmux.name, "seat", "bind", "api", target)
    assert out.returncode == 0, out.stderr
    assert spooled(pitcrew_home)[-1]["bind"] == {"seat": "api",
                                                 "terminal": f"{tmux.name}:{pane}"}
    out = pitcrew("--tmux-socket", tmux.name, "seat", "bind", "api", "%99")
    assert out.returncode == 2
    assert out.stderr == (f"pitcrew: no agent terminal %99 on tmux server {tmux.name} "
                          "(see `pitcrew status`)\n")


def test_the_running_watcher_keeps_a_waiting_message_until_its_pane_comes(
    tmux: TmuxServer, pitcrew_home: Path, fake_provider_installed: Path
) -> None:
    (pitcrew_home / "config.toml").write_text("[watch]\npoll_interval = 0.5\n")
    first = tmux.start("exec sleep 300")
    upcoming = f"%{int(first[1:]) + 1}"            # tmux numbers panes in order
    watch = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name})
    try:
        watch.wait_for("watching tmux server")
        out = pitcrew("send", "--wait", upcoming, "say hi later",
                      env={"PITCREW_TMUX_SOCKET": tmux.name})
        assert out.returncode == 0, out.stderr
        watch.wait_for(f"{tmux.name}:{upcoming}: queued a message")
        pane = tmux.start("fakeagent")
        assert pane == upcoming
        watch.wait_for(f"{tmux.name}:{pane}: typed a queued message", timeout=40)
        wait_until(lambda: "say hi later" in tmux.screen(pane), 15)
    finally:
        watch.stop()
