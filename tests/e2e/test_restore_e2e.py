"""After a reboot (issue 28), end to end: the real `pitcrew watch` records three agents in two
sessions on a private tmux server — one typed at bash with a variable set only in that shell,
one the pane's own command, one behind `env …`, that one mid-task — then the server and the
watcher are killed (-9) as a reboot would, a new watcher starts, and `pitcrew restore` puts
every window back (names, indices, folders, pane counts), each agent in its own session, with
exactly one continue, to the mid-task agent. A second restore creates and types nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from pitcrew.supervisor.store import fleet_file
from tests.e2e.test_autopilot_e2e import rows, session_records, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path) -> Path:
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\n")
    return pitcrew_home


def restore(tmux: TmuxServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", "restore", *args],
                          env={**os.environ, "PITCREW_TMUX_SOCKET": tmux.name},
                          capture_output=True, text=True, timeout=60, check=False)


def layout(tmux: TmuxServer) -> dict[tuple[str, int], tuple[str, list[str]]]:
    """(session, window index) → (window name, its panes' folders in pane order)."""
    out: dict[tuple[str, int], tuple[str, list[str]]] = {}
    for p in sorted(tmux.tmux.list_panes(), key=lambda p: (p.session_name, p.window_index,
                                                          p.pane_index)):
        out.setdefault((p.session_name, p.window_index), (p.window_name, []))[1].append(
            p.current_path)
    return out


def agents(tmux: TmuxServer) -> dict[str, psutil.Process]:
    """The fake agent of each pane, by `session:window`."""
    found = {}
    for pane in tmux.tmux.list_panes():
        try:
            root = psutil.Process(pane.pid)
            for proc in [root, *root.children(recursive=True)]:
                if any(part.endswith("fakeagent") for part in proc.cmdline()[:2]):
                    found[f"{pane.session_name}:{pane.window_index}"] = proc
        except psutil.Error:
            continue
    return found


def prompts(tmux: TmuxServer) -> list[tuple[str, str]]:
    """(session id, text) of every prompt the fake agents were given."""
    out = []
    for path in tmux.fake_home.rglob("*.jsonl"):
        sid = path.stem
        out += [(sid, r["text"]) for r in session_records_of(path) if r["type"] == "prompt"]
    return sorted(out)


def session_records_of(path: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in path.read_text().splitlines()]


def recorded(home: Path, tmux: TmuxServer) -> list:
    return [a for w in fleet_file.load(home / "fleet.json").record.get(tmux.name, ())
            for a in w.agents]


def test_after_a_restart_every_agent_comes_back_in_its_own_session_and_one_continues(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    api, notes, web, docs = (tmp_path / n for n in ("api", "notes", "web", "docs"))
    for folder in (api, notes, web, docs):
        folder.mkdir()
    t = tmux.tmux
    env = {**tmux.env, "FAKEAGENT_WORK": "0.5"}
    shell = t.new_session("work", ["bash", "--norc", "--noprofile", "-i"], str(api), 160, 40, env)
    t.run("rename-window", "-t", "=work:0", "api")
    t.run("split-window", "-d", "-t", shell, "-c", str(notes))
    t.run("new-window", "-d", "-t", "=work:3", "-n", "web", "-c", str(web), "fakeagent")
    t.new_session("docs", ["env", "DOCS_MARK=behind-env", "fakeagent"], str(docs), 160, 40, env)
    t.run("rename-window", "-t", "=docs:0", "notes")
    tmux.type(shell, "export SHELL_MARK=only-in-bash")
    tmux.type(shell, "fakeagent")
    panes = {f"{p.session_name}:{p.window_index}": p.pane_id for p in t.list_panes()
             if p.pane_index == 0}
    for target in ("work:0", "work:3", "docs:0"):
        tmux.wait_for_text(panes[target], "fake>")
    before = layout(tmux)

    w = watch(tmux)
    try:
        for target in ("work:0", "work:3", "docs:0"):
            w.wait_for(f"{panes[target]}: idle")
        tmux.type(panes["work:0"], "hello")
        tmux.type(panes["docs:0"], "work 60")             # mid-task when the "reboot" comes
        tmux.type(panes["work:3"], "hello")
        wait_until(lambda: sorted((a.task or "", bool(a.session_id), a.launch.style)
                                  for a in recorded(home, tmux)) == [
            ("", True, "pane"), ("", True, "shell"), ("work 60", True, "pane")], 30,
            message=lambda: f"the fleet record: {recorded(home, tmux)}")
        running = agents(tmux)
        old_ids = {a.session_id for a in recorded(home, tmux)}
        mid = next(a.session_id for a in recorded(home, tmux) if a.task == "work 60")
    finally:
        w.proc.kill()                                    # as a reboot does: no goodbye
        w.proc.wait(10)
        for proc in agents(tmux).values():
            proc.kill()
        t.run("kill-server")
    assert len(running) == 3 and len(old_ids) == 3
    wait_until(lambda: not t.server_alive(), 10, message="the tmux server gone")
    said = prompts(tmux)

    w = watch(tmux)
    try:
        w.wait_for("3 agents from before the restart can be restored: pitcrew restore")
        dry = restore(tmux, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "Dry run: nothing was created" in dry.stdout and not t.server_alive()
        assert "then typed: " in dry.stdout and CONTINUE_MESSAGE in dry.stdout
        done = restore(tmux)
        assert done.returncode == 0, done.stdout + done.stderr
        assert layout(tmux) == before                   # names, indices, folders, pane counts
        now = wait_until(lambda: (found := agents(tmux)) and len(found) == 3 and found, 20,
                         message=lambda: f"three agents running: {agents(tmux)}")
        resumed = []
        for proc in now.values():
            argv = proc.cmdline()
            assert "--resume" in argv, argv
            resumed.append(argv[argv.index("--resume") + 1])
        assert sorted(resumed) == sorted(old_ids)        # each in its own session
        assert now["work:0"].environ()["SHELL_MARK"] == "only-in-bash"
        assert now["docs:0"].environ()["DOCS_MARK"] == "behind-env"
        assert psutil.Process(now["work:0"].ppid()).name() == "bash"   # typed at a bash
        wait_until(lambda: (mid, CONTINUE_MESSAGE) in prompts(tmux), 40,
                   message=lambda: f"the continue typed: {prompts(tmux)}\n" + "\n".join(w.lines))
        again = restore(tmux)
        assert again.returncode == 0 and "Nothing to restore" in again.stdout, again.stdout
        assert layout(tmux) == before
        wait_until(lambda: any(r.badge.value == "Typed" for r in rows(home)), 20)
    finally:
        assert w.stop() == 0
    continues = [p for p in prompts(tmux) if p[1] == CONTINUE_MESSAGE]
    assert continues == [(mid, CONTINUE_MESSAGE)]         # once, to the mid-task agent only
    assert sorted(set(prompts(tmux)) - set(said)) == [(mid, CONTINUE_MESSAGE)]
    restored = [r for r in rows(home) if r.badge.value == "Restored"]
    assert sorted(str(r.readings["session_id"]) for r in restored) == sorted(old_ids)
    assert len(session_records(tmux)) > 0
