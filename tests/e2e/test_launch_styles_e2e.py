"""Autopilot resumes an agent the way it was started (SPEC §7), end to end: the real
`pitcrew watch`, a real tmux server that Pitcrew did not configure (no global
`remain-on-exit`), and a CLI declared only by a provider file written from the README
(tests/toy_cli/toyagent.toml), started from a shell, as the pane's own command, or behind a
wrapper. Each test asserts what a user would see: the same pane, the same shell, the agent
running again with `--resume <its session>`, the environment it had, one continue message,
and the ledger's rows.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import psutil
import pytest

from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from tests.e2e.test_autopilot_e2e import badges, rows, wait_badges, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
TOY_DIR = Path(__file__).resolve().parents[1] / "toy_cli"
SCRIPT = TOY_DIR / "toyagent"
SHELLS = [s for s in ("bash", "sh", "zsh") if shutil.which(s)]


@pytest.fixture
def home(pitcrew_home: Path) -> Path:
    return configure(pitcrew_home)


def configure(pitcrew_home: Path) -> Path:
    """Autopilot on, and the toy CLI declared the way a user adds one: a provider file."""
    (pitcrew_home / "config.toml").write_text(
        "[autopilot]\nenabled = true\nquiet_after = 10\n[diagnosis]\nmode = \"timer\"\n")
    providers = pitcrew_home / "providers"
    providers.mkdir(exist_ok=True)
    shutil.copy(TOY_DIR / "toyagent.toml", providers / "toyagent.toml")
    return pitcrew_home


def toy_home(tmux: TmuxServer) -> Path:
    return tmux.root / "toy-home"


def session_file(tmux: TmuxServer) -> Path:
    return wait_until(lambda: next(iter(toy_home(tmux).rglob("*.jsonl")), None), 10,
                      message="a toyagent session file")


def prompts(path: Path) -> list[str]:
    import json

    return [json.loads(line)["text"] for line in path.read_text().splitlines()
            if '"user"' in line]


def agents_in(tmux: TmuxServer, pane: str) -> list[psutil.Process]:
    root = psutil.Process(tmux.pane(pane).pid)
    return [p for p in [root, *root.children(recursive=True)]
            if any("toyagent" in part for part in p.cmdline())]


def resumed_process(tmux: TmuxServer, pane: str, sid: str) -> psutil.Process:
    def find() -> psutil.Process | None:
        for proc in agents_in(tmux, pane):
            cmd = proc.cmdline()
            if "--resume" in cmd and cmd[cmd.index("--resume") + 1] == sid:
                return proc
        return None

    return wait_until(find, 15, message=lambda: f"toyagent --resume {sid} in {pane}:\n"
                      + tmux.screen(pane))


def shell_pane(tmux: TmuxServer, shell: str, cwd: Path) -> tuple[str, int]:
    """A pane running an interactive `shell`, where the agent's PATH, HOME-like settings and
    mark are set only in that shell (tmux's own environment knows nothing of them)."""
    argv = {"bash": "bash --norc --noprofile -i", "sh": "sh -i", "zsh": "zsh -f -i"}[shell]
    pane = tmux.start(argv, cwd=cwd, keep_dead=False)
    exports = (f"export PATH={shlex.quote(str(TOY_DIR))}:$PATH "
               f"TOYAGENT_HOME={shlex.quote(str(toy_home(tmux)))} TOYAGENT_MARK=only-in-{shell}")
    tmux.type(pane, exports)
    tmux.type(pane, "toyagent")
    tmux.wait_for_text(pane, "▸")
    return pane, tmux.pane(pane).pid


def start_crash_and_resume(tmux: TmuxServer, home: Path, pane: str) -> str:
    tmux.type(pane, "crash")
    sid = session_file(tmux).stem
    wait_badges(home, "Resumed", "Continued", timeout=30)
    return sid


@pytest.mark.parametrize("shell", SHELLS)
def test_an_agent_started_from_a_shell_is_resumed_at_that_same_shell(
        tmux: TmuxServer, home: Path, tmp_path: Path, shell: str) -> None:
    pane, shell_pid = shell_pane(tmux, shell, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        sid = start_crash_and_resume(tmux, home, pane)
        proc = resumed_process(tmux, pane, sid)
        assert proc.environ()["TOYAGENT_MARK"] == f"only-in-{shell}"
        tmux.wait_for_text(pane, f"Resumed session {sid}")
        assert f"mark: only-in-{shell}" in tmux.screen(pane)
        assert tmux.pane(pane).pid == shell_pid, "the user's shell survived"
        assert psutil.Process(shell_pid).is_running()
        assert proc.ppid() == shell_pid or shell_pid in [p.pid for p in proc.parents()]
        wait_until(lambda: CONTINUE_MESSAGE in prompts(session_file(tmux)), 10)
    finally:
        assert w.stop() == 0
    assert prompts(session_file(tmux)) == ["crash", CONTINUE_MESSAGE]   # typed once
    resumed = next(r for r in rows(home) if r.badge.value == "Resumed")
    assert resumed.readings["session_id"] == sid and resumed.prompt == "crash"


@pytest.mark.parametrize("how", ["env", "exec-script", "python-m"])
def test_an_agent_that_is_the_panes_own_command_is_respawned_with_its_environment(
        tmux: TmuxServer, home: Path, tmp_path: Path, how: str) -> None:
    env = (f"env TOYAGENT_HOME={shlex.quote(str(toy_home(tmux)))} "
           f"TOYAGENT_MARK=given-to-{how}")
    if how == "env":
        command = f"{env} {shlex.quote(str(SCRIPT))}"
    elif how == "exec-script":
        wrapper = tmp_path / "run-agent"
        wrapper.write_text(f"#!/bin/sh\nexport TOYAGENT_MARK=given-to-{how}\n"
                           f"export TOYAGENT_HOME={shlex.quote(str(toy_home(tmux)))}\n"
                           f"exec {shlex.quote(str(SCRIPT))}\n")
        wrapper.chmod(0o755)
        command = shlex.quote(str(wrapper))
    else:
        command = (f"{env} PYTHONPATH={shlex.quote(str(TOY_DIR))} "
                   f"{shlex.quote(sys.executable)} -m toyagent_pkg")
    pane = tmux.start(command, cwd=tmp_path, keep_dead=False)
    tmux.wait_for_text(pane, "▸")
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        sid = start_crash_and_resume(tmux, home, pane)
        proc = resumed_process(tmux, pane, sid)
        assert proc.environ()["TOYAGENT_MARK"] == f"given-to-{how}"
        assert proc.cwd() == str(tmp_path)
        tmux.wait_for_text(pane, f"Resumed session {sid}")
        wait_until(lambda: CONTINUE_MESSAGE in prompts(session_file(tmux)), 10)
    finally:
        assert w.stop() == 0
    assert prompts(session_file(tmux)) == ["crash", CONTINUE_MESSAGE]


def test_a_hung_agent_is_stopped_and_resumed_and_its_shell_kept(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, shell_pid = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "hang")
        sid = session_file(tmux).stem
        wait_badges(home, "Resumed", timeout=40)
        resumed_process(tmux, pane, sid)
        assert tmux.pane(pane).pid == shell_pid
    finally:
        assert w.stop() == 0
    assert "killed by" not in " ".join(r.reason for r in rows(home))


def test_a_shell_busy_with_another_program_is_never_typed_into(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, shell_pid = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux, scale="1")               # the real 5 s before the first restart
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash")
        tmux.wait_for_text(pane, "RuntimeError")
        tmux.type(pane, "sleep 60")          # the user is using the shell again
        wait_badges(home, "Waiting on you", timeout=20)
    finally:
        assert w.stop() == 0
    assert "--resume" not in tmux.screen(pane)
    assert [p.name() for p in psutil.Process(shell_pid).children()] == ["sleep"]
    [waiting] = [r for r in rows(home) if r.badge.value == "Waiting on you"]
    assert "busy with another program" in waiting.reason


def test_a_resumed_agent_that_dies_at_once_is_couldnt_resume_with_its_status(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    command = (f"env TOYAGENT_HOME={shlex.quote(str(toy_home(tmux)))} "
               f"{shlex.quote(str(SCRIPT))}")
    pane = tmux.start(command, cwd=tmp_path, keep_dead=False)
    tmux.wait_for_text(pane, "▸")
    w = watch(tmux, scale="1")
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash")
        path = session_file(tmux)
        wait_until(lambda: tmux.pane(pane).dead, 10)
        path.unlink()                        # nothing left to resume: it will exit 1
        w.wait_for(": respawned the pane", timeout=15)
        respawned = time.monotonic()
        wait_badges(home, "Couldn't resume", timeout=10)
        assert time.monotonic() - respawned < 3.0
    finally:
        assert w.stop() == 0
    [failed] = [r for r in rows(home) if r.badge.value == "Couldn't resume"]
    assert failed.readings["status"] == 1
    assert any("No session" in line for line in failed.readings["last_lines"])


def test_ctrl_c_on_an_agent_started_from_a_shell_is_left_alone(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, shell_pid = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "hang")
        session_file(tmux)
        w.wait_for(": busy")
        tmux.tmux.send_keys(pane, "C-c")     # the user stops it: a traceback and ^C
        tmux.wait_for_text(pane, "KeyboardInterrupt")
        w.wait_for("Toy Agent exited")
        time.sleep(1.5)                      # longer than the scaled 0.5 s backoff
    finally:
        assert w.stop() == 0
    assert "--resume" not in tmux.screen(pane)
    assert not [b for b in badges(home) if b in ("Resumed", "Continued", "Scheduled")]
    assert tmux.pane(pane).pid == shell_pid


def test_a_new_window_is_watched_from_tmux_own_event_and_its_crash_resumed(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    first, _ = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{first}: idle")
        command = (f"env TOYAGENT_HOME={shlex.quote(str(toy_home(tmux) / 'second'))} "
                   f"{shlex.quote(str(SCRIPT))}")
        pane = tmux.start(command, cwd=tmp_path / "..", keep_dead=False)
        opened = time.monotonic()
        w.wait_for(f"{pane}: watching Toy Agent", timeout=5)
        # tmux's own event found it, not the fallback listing 10 s apart (every session has
        # its client, so no 1 s listing either). How fast is bench/watch_cost.py's figure.
        assert time.monotonic() - opened < 5.0
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash")
        wait_badges(home, "Resumed", timeout=30)
    finally:
        assert w.stop() == 0
    assert all(r.terminal.endswith(pane) for r in rows(home))
    assert first != pane


def test_a_cli_declared_with_only_markers_gets_an_incident_per_prompt_with_its_text(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, _ = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "first task")
        tmux.wait_for_text(pane, "done: first task")
        # the next prompt as a person types it: after the answer was on screen for a moment
        # (typed within the same read tick, a minimal provider cannot tell two prompts apart)
        wait_until(lambda: sum(f"{pane}: idle (was" in line for line in w.lines) >= 1, 10)
        tmux.type(pane, "crash now please")
        wait_badges(home, "Resumed", "Continued", timeout=30)
        tmux.wait_for_text(pane, "done: Continue from where")
        tmux.type(pane, "an unrelated task")
        tmux.wait_for_text(pane, "done: an unrelated task")
        tmux.type(pane, "crash again")
        wait_until(lambda: [r for r in rows(home) if r.prompt == "crash again"
                            and r.badge.value == "Resumed"], 30,
                   message=lambda: str([(r.badge.value, r.prompt) for r in rows(home)]))
    finally:
        assert w.stop() == 0
    resumed = [r for r in rows(home) if r.badge.value == "Resumed"]
    assert [r.prompt for r in resumed] == ["crash now please", "crash again"]
    assert all(r.attempt == 1 for r in resumed), "a new prompt opened a new incident"
    assert "Stopped retrying" not in badges(home)


def test_the_resume_command_is_typed_from_the_provider_file_and_the_session_id_only(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, _ = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        sid = start_crash_and_resume(tmux, home, pane)
    finally:
        assert w.stop() == 0
    typed = next(line for line in tmux.screen(pane).splitlines() if "--resume" in line)
    assert typed.rstrip().endswith(f"{SCRIPT} --resume {sid}"), typed


def test_a_message_to_an_agent_that_answers_at_once_is_typed_exactly_once(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    """No busy phase is ever visible (`quick` answers at once): the message is confirmed from
    its copy on screen, and never typed a second time."""
    import subprocess

    pane, _ = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        sent = subprocess.run([sys.executable, "-m", "pitcrew.supervisor", "send", pane,
                               "quick"], env={**os.environ, "PITCREW_TMUX_SOCKET": tmux.name},
                              capture_output=True, text=True, timeout=30)
        assert sent.returncode == 0, sent.stdout + sent.stderr
        w.wait_for("delivered", timeout=15)
        time.sleep(5)                       # past three scaled 15 s retry intervals
    finally:
        assert w.stop() == 0
    assert prompts(session_file(tmux)) == ["quick"]
    assert tmux.screen(pane).count("» quick") == 1
