"""Text Pitcrew types is text (SPEC §7), end to end: a CLI declared only by a provider file
(tests/toy_cli/toyagent.toml) started from an interactive shell, the real `pitcrew watch`,
a real tmux server. A control character typed into a pane is a key: `\\x04` at an empty line
ends the agent, and what follows goes to the user's shell, with Pitcrew pressing Enter.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cli.test_autopilot_cli import pitcrew
from tests.e2e.test_autopilot_e2e import watch
from tests.e2e.test_launch_styles_e2e import agents_in, configure, shell_pane
from tests.support.tmux_server import TmuxServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(pitcrew_home: Path) -> Path:
    return configure(pitcrew_home)


def spool(home: Path, record: dict) -> None:
    """A command as the dashboard hands it over (no CLI in between)."""
    with open(home / "commands.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({**record, "at": time.time()}) + "\n")


def test_send_refuses_control_characters_and_nothing_reaches_the_shell(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, _ = shell_pane(tmux, "bash", tmp_path)
    key = f"{tmux.name}:{pane}"
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        for hostile in ("\x04touch pwned-cli", "hi\x03there", "\x1b[2J\x15x", "a\x7fb",
                        "c1\u009bx"):
            out = pitcrew("--tmux-socket", tmux.name, "send", pane, hostile)
            assert out.returncode == 2, out
            assert len(out.stderr.splitlines()) == 1
            assert out.stderr.startswith("pitcrew: the text holds a control character ")
            assert "nothing queued" in out.stderr and out.stdout == ""
        assert not (home / "commands.jsonl").exists() or \
            (home / "commands.jsonl").read_text() == ""
        # the dashboard's way in (the spool): typed as visible text, never as keys
        spool(home, {"send": {"terminal": key, "text": "\x04touch pwned-spool", "id": "d1"}})
        w.wait_for(f"{key}: typed a queued message")
        tmux.wait_for_text(pane, "» \\x04touch pwned-spool")
        time.sleep(1.5)
        assert agents_in(tmux, pane), "the agent still runs:\n" + tmux.screen(pane)
        assert "bye" not in tmux.screen(pane)
    finally:
        assert w.stop() == 0
    assert not list(tmp_path.glob("pwned*")), "the user's shell ran nothing"

