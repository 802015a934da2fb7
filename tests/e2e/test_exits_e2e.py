"""How an agent started from a shell ended, told from facts (issue 21 item 2), end to end:
the real `pitcrew watch`, a real tmux server, and the toy CLI declared only by a provider
file (tests/toy_cli/toyagent.toml, whose `goodbye` names the line it prints on a normal exit),
started from bash, zsh and sh under the prompts people have (`$ `, `% `, Debian's
`me@box:~/proj$ `).

* `/quit` or Ctrl-D → its goodbye, then the shell's prompt: nothing is typed, nothing resumed,
  and a prompt that was running is recorded as a normal stop;
* the same CLI declared without a `goodbye`: `/quit` (read as a prompt: the CLI declares no
  input line) ends it, and Pitcrew cannot tell how, so it types nothing and says so (one
  ledger row, a notification) — it never guesses a crash from a shell prompt;
* `kill -9` of the agent mid-task → the shell says `Killed`: resumed once, one continue.
"""

from __future__ import annotations

import shlex
import shutil
import time
from pathlib import Path

import pytest

from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from tests.e2e.test_autopilot_e2e import badges, rows, wait_badges, watch
from tests.e2e.test_launch_styles_e2e import (
    TOY_DIR,
    agents_in,
    configure,
    prompts,
    session_file,
    toy_home,
)
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
ARGV = {"bash": "bash --norc --noprofile -i", "sh": "sh -i", "zsh": "zsh -f -i"}
PROMPTS = {"bash": "$ ", "zsh": "% ", "sh": "me@box:~/proj$ "}
PS1 = {**PROMPTS, "zsh": "%% "}      # zsh's prompt escapes: "%%" draws one "%"
SHELLS = [s for s in ARGV if shutil.which(s)]


@pytest.fixture
def home(pitcrew_home: Path) -> Path:
    return configure(pitcrew_home)


def started_at(tmux: TmuxServer, shell: str, cwd: Path) -> str:
    """`toyagent` typed at an interactive `shell` whose prompt is `PROMPTS[shell]`."""
    pane = tmux.start(ARGV[shell], cwd=cwd, keep_dead=False)
    tmux.type(pane, f"PS1={shlex.quote(PS1[shell])}; "
                    f"export PATH={shlex.quote(str(TOY_DIR))}:$PATH "
                    f"TOYAGENT_HOME={shlex.quote(str(toy_home(tmux)))}")
    tmux.type(pane, "toyagent")
    tmux.wait_for_text(pane, "▸")
    return pane


def shell_back(tmux: TmuxServer, pane: str, shell: str) -> None:
    wait_until(lambda: tmux.screen(pane).rstrip().endswith(PROMPTS[shell].rstrip()), 10,
               message=lambda: f"the shell's prompt back:\n{tmux.screen(pane)}")


@pytest.mark.parametrize("how", ["/quit", "Ctrl-D"])
@pytest.mark.parametrize("shell", SHELLS)
def test_a_normal_exit_at_a_shell_is_left_alone(
        tmux: TmuxServer, home: Path, tmp_path: Path, shell: str, how: str) -> None:
    pane = started_at(tmux, shell, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "first task")
        tmux.wait_for_text(pane, "done: first task")
        wait_until(lambda: sum(f"{pane}: idle (was" in line for line in w.lines) >= 1, 10)
        if how == "/quit":
            tmux.type(pane, "/quit")
        else:
            tmux.tmux.send_keys(pane, "C-d")
        shell_back(tmux, pane, shell)
        w.wait_for("Toy Agent exited")
        time.sleep(2.0)                      # longer than the scaled 0.5 s backoff
    finally:
        assert w.stop() == 0
        print(*w.lines, sep="\n")
        print(tmux.screen(pane))
    assert "--resume" not in tmux.screen(pane), tmux.screen(pane)
    assert not agents_in(tmux, pane)
    assert prompts(session_file(tmux)) == ["first task"]
    assert not [b for b in badges(home) if b in ("Resumed", "Continued", "Scheduled",
                                                 "Couldn't resume", "Waiting on you")]
    assert all("normally" in r.reason for r in rows(home)), [r.reason for r in rows(home)]


def test_an_exit_pitcrew_cannot_tell_is_not_resumed_and_the_user_is_told(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    provider = home / "providers" / "toyagent.toml"
    provider.write_text("\n".join(line for line in provider.read_text().splitlines()
                                  if not line.startswith("goodbye")))
    pane = started_at(tmux, "sh", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "first task")
        tmux.wait_for_text(pane, "done: first task")
        wait_until(lambda: sum(f"{pane}: idle (was" in line for line in w.lines) >= 1, 10)
        tmux.type(pane, "/quit")     # read as a prompt (the CLI declares no input line)
        shell_back(tmux, pane, "sh")
        wait_badges(home, "Waiting on you", timeout=15)
        time.sleep(2.0)
    finally:
        assert w.stop() == 0
    assert "--resume" not in tmux.screen(pane)
    [row] = rows(home)
    assert "couldn't tell" in row.reason and "not resumed" in row.reason, row.reason
    assert row.readings.get("notified") is True


@pytest.mark.parametrize("shell", SHELLS)
def test_a_kill_9_at_a_shell_is_still_resumed_once(
        tmux: TmuxServer, home: Path, tmp_path: Path, shell: str) -> None:
    pane = started_at(tmux, shell, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "slow 30")
        w.wait_for(f"{pane}: busy")
        sid = session_file(tmux).stem
        agents_in(tmux, pane)[0].kill()
        wait_badges(home, "Resumed", "Continued", timeout=30)
        wait_until(lambda: CONTINUE_MESSAGE in prompts(session_file(tmux)), 15)
        time.sleep(1.5)
    finally:
        assert w.stop() == 0
        print(*w.lines, sep="\n")
        print(tmux.screen(pane))
    assert prompts(session_file(tmux)) == ["slow 30", CONTINUE_MESSAGE]
    resumed = next(r for r in rows(home) if r.badge.value == "Resumed")
    assert resumed.readings["session_id"] == sid and resumed.attempt == 1
