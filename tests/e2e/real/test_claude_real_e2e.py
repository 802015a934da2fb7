"""The real Claude Code CLI (the version pinned in tests/e2e/real/clis.txt, unmodified) under
the real `pitcrew watch` with Autopilot on (issue 20 item 6), on a private tmux server, talking
to a stand-in Anthropic Messages API on 127.0.0.1 (tests/capture/standin_anthropic.py) under a
throwaway HOME whose first-run screens are settled by `.claude.json`.

Claude is started the way people start it: typed at an interactive bash prompt whose shell
alone has the API's address exported, and as the pane's own command.

* kill -9 of the claude process mid-task (the stand-in streams its answer slowly) → resumed
  with `--resume <its session>` at that same shell (or in that same pane), the stand-in gets a
  request that carries the earlier conversation, and exactly one continue;
* `/exit`, Ctrl-D twice, Ctrl-C twice, with the task done or mid-task → its goodbye, then the
  shell's prompt: nothing typed, no `Resumed` row (and `/exit` mid-task as the pane's command:
  nothing respawned);
* a permission menu → nothing typed.
"""

from __future__ import annotations

import contextlib
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from tests.e2e.test_autopilot_e2e import SCALE, badges, rows, wait_badges
from tests.support.proc import Running
from tests.support.realcli import (
    QUIET_ENV,
    Cli,
    Standin,
    kill_home_processes,
    processes_named,
    require,
    settle_claude,
    standin,
)
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.realcli]
KEY = "sk-ant-test-0000"
SLOW_TASK = "write the migration notes [[slow]]"
BASH = "bash --norc --noprofile -i"


@pytest.fixture
def claude() -> Cli:
    return require("claude")


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Standin]:
    with standin("standin_anthropic.py", tmp_path / "api.jsonl") as server:
        yield server


@pytest.fixture
def home(pitcrew_home: Path) -> Path:
    (pitcrew_home / "config.toml").write_text(
        "[autopilot]\nenabled = true\nquiet_after = 60\n[diagnosis]\nmode = \"timer\"\n")
    return pitcrew_home


@pytest.fixture
def work(tmp_path: Path, tmux: TmuxServer, claude: Cli) -> Iterator[Path]:
    folder = tmp_path / "proj"
    folder.mkdir()
    settle_claude(tmux.home, claude, [folder], KEY)
    yield folder
    kill_home_processes(tmux.home)


def watch(tmux: TmuxServer) -> Running:
    """`pitcrew watch -v` on the test's tmux server (its debug log, in PITCREW_HOME/logs,
    tells what it read from the real CLI's screens)."""
    w = Running(["watch", "-v"], env={"PITCREW_TMUX_SOCKET": tmux.name,
                                      "PITCREW_TEST_TIME_SCALE": SCALE})
    w.wait_for("Autopilot: Watching.")
    tmux.wait_watched()
    return w


def agent_env(api: Standin) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": KEY, **QUIET_ENV}


def idle(screen: str) -> bool:
    return "? for shortcuts" in screen and "esc to interrupt" not in screen


def at_shell(tmux: TmuxServer, claude: Cli, api: Standin, work: Path) -> tuple[str, int]:
    """`claude` typed at an interactive bash whose PATH and API settings are exported in that
    shell only (tmux's own environment knows nothing of them)."""
    pane = tmux.start(BASH, cwd=work, keep_dead=False)
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in agent_env(api).items())
    tmux.type(pane, f"PS1='$ '; export PATH={shlex.quote(str(claude.bin_dir))}:$PATH {exports}")
    tmux.type(pane, "claude")
    wait_until(lambda: idle(tmux.screen(pane)), 60,
               message=lambda: f"claude's input box:\n{tmux.screen(pane)}")
    return pane, tmux.pane(pane).pid


def as_pane_command(tmux: TmuxServer, claude: Cli, api: Standin, work: Path) -> str:
    pane = tmux.start([str(claude.bin)], cwd=work, env=agent_env(api), keep_dead=False)
    wait_until(lambda: idle(tmux.screen(pane)), 60,
               message=lambda: f"claude's input box:\n{tmux.screen(pane)}")
    return pane


def submit(tmux: TmuxServer, pane: str, text: str) -> None:
    """Type `text` into Claude's input box, and press Enter once it shows there (an Enter in
    the same burst as the text would be read as part of a paste)."""
    tmux.type(pane, text, enter=False)
    wait_until(lambda: any(line.startswith("❯") and line[1:].strip() == text
                           for line in tmux.screen(pane).splitlines()), 15,
               message=lambda: f"{text!r} in the input box:\n{tmux.screen(pane)}")
    tmux.tmux.send_keys(pane, "Enter")


def turns(api: Standin, needle: str) -> list[dict[str, Any]]:
    """The stand-in's requests for a turn of the conversation (with Claude's tools, not its
    title or topic side requests) whose newest user message contains `needle`."""
    return [r for r in api.requests() if r.get("tools") and needle in r.get("last_user", "")]


def claude_procs(tmux: TmuxServer, pane: str, claude: Cli) -> list[psutil.Process]:
    """The claude processes in the pane (not the `rg` it runs from the same executable, as
    `argv[0] = rg`)."""
    root = tmux.pane(pane).pid
    found = []
    for proc in processes_named(root, claude.bin):
        with contextlib.suppress(psutil.Error):
            if (proc.pid == root or proc.ppid() == root) and proc.cmdline() and \
                    Path(proc.cmdline()[0]).name == "claude":
                found.append(proc)
    return found


def session_id(tmux: TmuxServer) -> str:
    folder = tmux.home / ".claude" / "projects"
    path = wait_until(lambda: next(iter(folder.rglob("*.jsonl")), None), 20,
                      message="claude's session file")
    return path.stem


def busy_mid_task(tmux: TmuxServer, w: Running, pane: str, api: Standin) -> None:
    w.wait_for(f"{pane}: idle", timeout=30)
    submit(tmux, pane, SLOW_TASK)
    wait_until(lambda: turns(api, "[[slow]]"), 30, message="the slow turn at the stand-in")
    w.wait_for(f"{pane}: busy", timeout=30)
    tmux.wait_for_text(pane, "Working through the refactor", timeout=30)


def assert_resumed_once(tmux: TmuxServer, home: Path, pane: str, api: Standin, sid: str,
                        w: Running, claude: Cli) -> psutil.Process:
    wait_badges(home, "Resumed", "Continued", timeout=60)
    wait_until(lambda: turns(api, CONTINUE_MESSAGE), 30,
               message=lambda: f"the continue at the stand-in:\n{tmux.screen(pane)}")
    wait_until(lambda: idle(tmux.screen(pane)), 30,
               message=lambda: f"claude idle after the continue:\n{tmux.screen(pane)}")
    time.sleep(3.0)             # longer than the scaled back-off: a second continue would show
    [proc] = claude_procs(tmux, pane, claude)
    cmd = proc.cmdline()
    assert "--resume" in cmd and cmd[cmd.index("--resume") + 1] == sid, cmd
    [continued] = turns(api, CONTINUE_MESSAGE)                        # exactly one continue
    assert any(SLOW_TASK in text for text in continued["user_texts"]), continued["user_texts"]
    resumed = next(r for r in rows(home) if r.badge.value == "Resumed")
    assert resumed.readings["session_id"] == sid and resumed.attempt == 1
    assert badges(home).count("Continued") == 1, badges(home)
    assert len(turns(api, "[[slow]]")) == 1, "the task itself was not sent again"
    return proc


def test_kill_9_mid_task_at_a_shell_is_resumed_in_its_session_and_continued_once(
        tmux: TmuxServer, home: Path, work: Path, claude: Cli, api: Standin) -> None:
    pane, shell_pid = at_shell(tmux, claude, api, work)
    w = watch(tmux)
    try:
        busy_mid_task(tmux, w, pane, api)
        sid = session_id(tmux)
        [agent] = claude_procs(tmux, pane, claude)
        assert agent.ppid() == shell_pid
        agent.kill()
        proc = assert_resumed_once(tmux, home, pane, api, sid, w, claude)
    finally:
        assert w.stop() == 0
        print(*w.lines, sep="\n")
        print(tmux.screen(pane))
    assert tmux.pane(pane).pid == shell_pid, "the user's shell survived"
    assert proc.ppid() == shell_pid, "resumed at that same shell"
    assert proc.environ()["ANTHROPIC_BASE_URL"] == api.url   # the shell's own export


def test_kill_9_mid_task_as_the_panes_command_is_resumed_in_its_session_and_continued_once(
        tmux: TmuxServer, home: Path, work: Path, claude: Cli, api: Standin) -> None:
    pane = as_pane_command(tmux, claude, api, work)
    w = watch(tmux)
    try:
        busy_mid_task(tmux, w, pane, api)
        sid = session_id(tmux)
        [agent] = claude_procs(tmux, pane, claude)
        agent.kill()
        proc = assert_resumed_once(tmux, home, pane, api, sid, w, claude)
    finally:
        assert w.stop() == 0
        print(*w.lines, sep="\n")
        print(tmux.screen(pane))
    assert proc.environ()["ANTHROPIC_BASE_URL"] == api.url


def exit_claude(tmux: TmuxServer, pane: str, how: str, claude: Cli) -> None:
    """End Claude the way a person does. Ctrl-D and Ctrl-C must be pressed twice within about
    a second ("Press Ctrl-D again to exit"): both presses go in one tmux command, so a loaded
    machine cannot stretch the gap between them; should Claude still run a few seconds later,
    the pair is pressed again (never once it is gone: a Ctrl-D would reach the shell)."""
    if how == "/exit":
        submit(tmux, pane, "/exit")
        return
    key = {"Ctrl-D": "C-d", "Ctrl-C": "C-c"}[how]
    if key == "C-c" and not idle(tmux.screen(pane)):
        tmux.tmux.send_keys(pane, key)      # mid-task, the first Ctrl-C interrupts the turn
        wait_until(lambda: idle(tmux.screen(pane)), 30,
                   message=lambda: f"the turn interrupted:\n{tmux.screen(pane)}")
    for _ in range(3):
        tmux.tmux.send_keys(pane, key, key)
        with contextlib.suppress(AssertionError):
            wait_until(lambda: not claude_procs(tmux, pane, claude), 10)
            return
    raise AssertionError(f"{how} twice did not end claude:\n{tmux.screen(pane)}")


@pytest.mark.parametrize("when", ["idle", "mid-task"])
@pytest.mark.parametrize("how", ["/exit", "Ctrl-D", "Ctrl-C"])
def test_a_normal_exit_at_a_shell_is_left_alone(
        tmux: TmuxServer, home: Path, work: Path, claude: Cli, api: Standin, how: str,
        when: str) -> None:
    pane, shell_pid = at_shell(tmux, claude, api, work)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle", timeout=30)
        if when == "idle":
            submit(tmux, pane, "look at the project")
            tmux.wait_for_text(pane, "Hello from the stand-in", timeout=30)
            wait_until(lambda: idle(tmux.screen(pane)), 30)
        else:
            busy_mid_task(tmux, w, pane, api)
        exit_claude(tmux, pane, how, claude)
        tmux.wait_for_text(pane, "Resume this session with:", timeout=30)
        wait_until(lambda: tmux.screen(pane).rstrip().endswith("$"), 15,
                   message=lambda: f"the shell's prompt back:\n{tmux.screen(pane)}")
        w.wait_for("Claude Code exited", timeout=30)
        time.sleep(3.0)                     # longer than the scaled 0.5 s back-off
        screen = tmux.screen(pane)
    finally:
        assert w.stop() == 0
        print(*w.lines, sep="\n")
        print(tmux.screen(pane))
    after = screen[screen.index("Resume this session with:"):]
    assert after.rstrip().endswith("$") and after.count("\n$") == 1, after   # nothing typed
    assert not claude_procs(tmux, pane, claude) and tmux.pane(pane).pid == shell_pid
    assert not [b for b in badges(home) if b in ("Resumed", "Continued", "Couldn't resume",
                                                 "Waiting on you")], badges(home)
    assert len(turns(api, "look at the project" if when == "idle" else "[[slow]]")) == 1


def test_exit_mid_task_as_the_panes_command_is_left_alone(
        tmux: TmuxServer, home: Path, work: Path, claude: Cli, api: Standin) -> None:
    pane = as_pane_command(tmux, claude, api, work)
    w = watch(tmux)
    try:
        busy_mid_task(tmux, w, pane, api)
        exit_claude(tmux, pane, "/exit", claude)
        w.wait_for("Claude Code exited", timeout=30)
        time.sleep(3.0)                     # longer than the scaled 0.5 s back-off
    finally:
        assert w.stop() == 0
        print(*w.lines, sep="\n")
    gone = tmux.tmux.pane(pane)
    assert gone is None or (gone.dead and not claude_procs(tmux, pane, claude)), gone
    assert not [b for b in badges(home) if b in ("Resumed", "Continued", "Couldn't resume",
                                                 "Waiting on you")], badges(home)
    assert len(turns(api, "[[slow]]")) == 1


def test_a_permission_menu_is_never_typed_into(
        tmux: TmuxServer, home: Path, work: Path, claude: Cli, api: Standin) -> None:
    pane, _ = at_shell(tmux, claude, api, work)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle", timeout=30)
        (work / "scratch.txt").write_text("keep me")     # what the menu's command deletes
        submit(tmux, pane, "clean up the scratch file [[tool]]")
        tmux.wait_for_text(pane, "Do you want to proceed?", timeout=30)
        w.wait_for(f"{pane}: picker", timeout=30)
        w.wait_for(f"{pane}: idle timeout", timeout=30)   # the task went quiet: looked at
        time.sleep(3.0)                     # longer than the scaled back-off
        screen = tmux.screen(pane)
    finally:
        assert w.stop() == 0
        print(*w.lines, sep="\n")
        print(tmux.screen(pane))
    assert "Do you want to proceed?" in screen and "❯ 1. Yes" in screen    # untouched
    assert (work / "scratch.txt").exists()
    assert len([r for r in api.requests() if r.get("tools")]) == 1, "nothing was answered"
    assert not [b for b in badges(home) if b in ("Resumed", "Continued", "Typed")], badges(home)
