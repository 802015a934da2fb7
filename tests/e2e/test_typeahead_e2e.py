"""Never type onto the user's type-ahead (SPEC §7), end to end: the real `pitcrew watch`, a
real tmux server, the fake agent with an input line that takes type-ahead while it works
(FAKEAGENT_TYPEAHEAD=1, as real CLIs), and a user who has typed a line there without sending
it. Whatever Pitcrew types would be appended to that line and sent with it.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import pytest

from pitcrew.supervisor.core.timeouts import WRAP_UP_MESSAGE
from tests.e2e.test_autopilot_e2e import SCALE, rows, session_records, wait_badges
from tests.e2e.test_launch_styles_e2e import configure as configure_toy
from tests.e2e.test_launch_styles_e2e import session_file
from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


def watch(tmux: TmuxServer) -> Running:
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name,
                                "PITCREW_TEST_TIME_SCALE": SCALE})
    w.wait_for("Autopilot: Watching.")
    tmux.wait_watched()
    return w


def prompts(tmux: TmuxServer) -> list[str]:
    return [r["text"] for r in session_records(tmux) if r["type"] == "prompt"]


def test_the_wrap_up_message_is_not_typed_onto_the_users_type_ahead(
        tmux: TmuxServer, pitcrew_home: Path, fake_provider_installed: Path,
        tmp_path: Path) -> None:
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\n"
        "[timeouts]\nsoft = 20\nhard = false\nwrap_up = true\n")      # 20 s, scaled: 2 s
    pane = tmux.start("fakeagent", cwd=tmp_path, env={"FAKEAGENT_TYPEAHEAD": "1"})
    tmux.wait_for_text(pane, "fake>")
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "work 6")
        tmux.wait_for_text(pane, "esc to interrupt")
        tmux.type(pane, "my next idea", enter=False)      # typed ahead, not sent
        tmux.wait_for_text(pane, "fake> my next idea")
        wait_badges(home := pitcrew_home, "Timed out")
        w.wait_for("did not type", timeout=10)
        tmux.wait_for_text(pane, "● Done: work 6", timeout=20)
        time.sleep(1.0)
    finally:
        w.stop()
    assert prompts(tmux) == ["work 6"], "the user's line was not sent with Pitcrew's"
    assert tmux.screen(pane).rstrip().endswith("fake> my next idea")   # still theirs
    assert WRAP_UP_MESSAGE not in tmux.screen(pane)
    skipped = [r for r in rows(home) if r.badge.value == "Skipped"]
    assert skipped and "the input box holds text" in skipped[0].reason


def test_a_resume_command_is_not_typed_after_what_the_user_typed_at_the_shell(
        tmux: TmuxServer, pitcrew_home: Path, tmp_path: Path) -> None:
    """A toy agent started from bash crashes; before Autopilot's 5 s wait is over, the user
    has typed at the shell prompt. The resume command would run as `ls -latoyagent …`."""
    home = configure_toy(pitcrew_home)
    pane = tmux.start("bash --norc --noprofile -i", cwd=tmp_path, keep_dead=False)
    toy = Path(__file__).resolve().parents[1] / "toy_cli"
    tmux.type(pane, f"export PATH={shlex.quote(str(toy))}:$PATH "
                    f"TOYAGENT_HOME={shlex.quote(str(tmux.root / 'toy-home'))}")
    tmux.type(pane, "toyagent")
    tmux.wait_for_text(pane, "▸")
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name,
                                "PITCREW_TEST_TIME_SCALE": "1"})     # the real 5 s wait
    try:
        w.wait_for("Autopilot: Watching.")
        tmux.wait_watched()
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash")
        session_file(tmux)
        tmux.wait_for_text(pane, "RuntimeError: backend connection reset")
        wait_until(lambda: tmux.screen(pane).rstrip().endswith(("$", "#")), 15,
                   message=lambda: "the shell's prompt:\n" + tmux.screen(pane))
        tmux.type(pane, "echo mine", enter=False)
        wait_badges(home, "Waiting on you", timeout=30)
    finally:
        w.stop()
    last = [line for line in tmux.screen(pane).splitlines() if line.strip()][-1]
    # nothing added to their line
    assert last.endswith(("$ echo mine", "# echo mine")), tmux.screen(pane)
    [row] = [r for r in rows(home) if r.badge.value == "Waiting on you"]
    assert "command line" in row.reason
