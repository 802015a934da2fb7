"""The prompt Pitcrew records is the user's words, not the CLI's input glyph: the toy agent
(tests/toy_cli/toyagent), declared only by a provider file written here that names its input
line (`zorp ❯ …`), a glyph no built-in rule knows. The real `pitcrew watch`, a real tmux server."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_autopilot_e2e import rows, wait_badges, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
TOY_DIR = Path(__file__).resolve().parents[1] / "toy_cli"


@pytest.fixture
def home(pitcrew_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("PATH", f"{TOY_DIR}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TOYAGENT_HOME", str(tmp_path / "toy-home"))
    monkeypatch.setenv("TOYAGENT_PROMPT", "zorp ❯ ")
    providers = pitcrew_home / "providers"
    providers.mkdir(exist_ok=True)
    text = (TOY_DIR / "toyagent.toml").read_text()
    # its input line, as a user who read the README declares it: the glyph, then the text
    text = text.replace("[screen]\n", "[screen]\ninput = ['^zorp ❯(?: (?P<text>.*))?$']"
                        "\nturn = ['^zorp ❯ \\S']\n", 1)
    text = text.replace("idle = ['^▸\\s*$']", "idle = ['^zorp ❯\\s*$']")
    assert "input = " in text, "toyagent.toml has no [screen] table to extend"
    (providers / "toyagent.toml").write_text(text)
    (pitcrew_home / "config.toml").write_text("[autopilot]\nenabled = true\n")
    yield pitcrew_home


def test_a_prompt_is_recorded_without_the_input_glyph(
        home: Path, tmux: TmuxServer, tmp_path: Path) -> None:
    (home / "config.toml").write_text(      # a soft timeout of 20 s (scaled: 2 s)
        "[autopilot]\nenabled = true\n[timeouts]\nsoft = 20\n")
    pane = tmux.start(["toyagent"], cwd=tmp_path)
    tmux.wait_for_text(pane, "zorp ❯")
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "slow 20")
        wait_badges(home, "Timed out", timeout=30)      # a row that carries the prompt
    finally:
        w.stop()
    recorded = {r.prompt for r in rows(home)}
    assert recorded == {"slow 20"}, recorded


def test_a_prompt_answered_at_once_by_a_limit_is_recorded_as_typed(
        home: Path, tmux: TmuxServer, tmp_path: Path) -> None:
    """The toy answers `quota` with its limit line at once: no busy phase is ever seen."""
    (home / "config.toml").write_text("[autopilot]\nenabled = true\n[diagnosis]\n"
                                      'mode = "timer"\n')
    pane = tmux.start(["toyagent"], cwd=tmp_path)
    tmux.wait_for_text(pane, "zorp ❯")
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "quota 23:59")
        wait_until(lambda: [r for r in rows(home) if r.badge.value != "Diagnosed"], 30)
        time.sleep(2)
    finally:
        w.stop()
    recorded = [(r.badge.value, r.prompt) for r in rows(home)]
    assert recorded == [("Scheduled", "quota 23:59")], recorded
