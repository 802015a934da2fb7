"""Autopilot's later steps, end to end, with a CLI Pitcrew's authors did not write: the toy
agent (tests/toy_cli/toyagent), declared only by a provider file written from the README
(tests/toy_cli/toyagent.toml). The real `pitcrew watch`, a real tmux server.

* a quota that resets at a clock time a minute ahead is continued after the reset, once,
  on the real clock;
* an agent that answers with no busy phase at all (`--model toy-instant`) gets a queued
  message exactly once, and a failover brief exactly once;
* `seat bind` by pane id and by `session:window.pane` both fail over, and the old primary
  gets nothing for the rest of the test.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_autopilot_e2e import badges, rows, wait_badges, watch
from tests.e2e.test_diagnosis_e2e import watch as watch_off
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
TOY_DIR = Path(__file__).resolve().parents[1] / "toy_cli"
CONTINUE = "Continue from where you stopped"


@pytest.fixture
def toy_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The toy CLI on PATH and its sessions folder, as a user who installed it would have;
    set before the tmux server starts, so its panes and the agents Pitcrew launches agree."""
    home = tmp_path / "toy-home"
    monkeypatch.setenv("PATH", f"{TOY_DIR}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TOYAGENT_HOME", str(home))
    yield home


@pytest.fixture
def home(pitcrew_home: Path, toy_home: Path) -> Path:
    providers = pitcrew_home / "providers"
    providers.mkdir(exist_ok=True)
    shutil.copy(TOY_DIR / "toyagent.toml", providers / "toyagent.toml")
    return pitcrew_home


def configure(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text)


def pitcrew(tmux: TmuxServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PITCREW_TMUX_SOCKET": tmux.name})


def toy(tmux: TmuxServer, cwd: Path, model: str | None = None) -> str:
    pane = tmux.start(["toyagent", *(["--model", model] if model else [])], cwd=cwd)
    tmux.wait_for_text(pane, "▸")
    return pane


def typed_prompts(toy_home: Path) -> list[str]:
    """Every prompt any toy agent received, from its own session files."""
    out = []
    for path in sorted(toy_home.rglob("*.jsonl")):
        out += [r["text"] for r in map(json.loads, path.read_text().splitlines())
                if r["type"] == "user"]
    return out


def test_a_quota_that_resets_a_minute_ahead_is_continued_once_after_the_reset(
        tmux: TmuxServer, home: Path, toy_home: Path, tmp_path: Path) -> None:
    configure(home, "[autopilot]\nenabled = true\nquiet_after = 10\n")
    pane = toy(tmux, tmp_path)
    reset = (dt.datetime.now().astimezone() + dt.timedelta(seconds=75)).replace(
        second=0, microsecond=0)
    w = watch(tmux)                     # margins scaled: the reset itself is the real clock
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, f"quota {reset:%H:%M}")
        scheduled = wait_badges(home, "Scheduled")[0]        # at once: no diagnosis
        assert dt.datetime.fromisoformat(scheduled.readings["reset_at"]) == reset
        continued = wait_badges(home, "Scheduled", "Continued", timeout=200)[1]
        tmux.wait_for_text(pane, f"◇ done: {CONTINUE}")     # the agent took it: quota is back
        time.sleep(2)
    finally:
        w.stop()
    assert reset.timestamp() <= continued.at < reset.timestamp() + 60
    assert [p for p in typed_prompts(toy_home) if p.startswith(CONTINUE)] != []
    assert len([p for p in typed_prompts(toy_home) if p.startswith(CONTINUE)]) == 1
    assert badges(home).count("Scheduled") == 1          # the stale line started no wait


def test_an_agent_that_answers_at_once_gets_a_queued_message_exactly_once(
        tmux: TmuxServer, home: Path, toy_home: Path, tmp_path: Path) -> None:
    configure(home, "[autopilot]\nenabled = true\nquiet_after = 10\n")
    pane = toy(tmux, tmp_path, model="toy-instant")
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        sent = pitcrew(tmux, "send", pane, "summarise", "the", "changes")
        assert sent.returncode == 0, sent.stdout + sent.stderr
        w.wait_for("message delivered", timeout=30)
        time.sleep(3)                       # many scaled retry intervals: nothing more comes
    finally:
        w.stop()
    assert typed_prompts(toy_home) == ["summarise the changes"]
    assert tmux.screen(pane).count("» summarise the changes") == 1
    assert badges(home).count("Typed") == 1


@pytest.mark.parametrize("bound_as", ["pane id", "session:window.pane"])
def test_a_bound_seat_fails_over_once_and_the_old_primary_gets_nothing_after(
        tmux: TmuxServer, home: Path, toy_home: Path, tmp_path: Path, bound_as: str) -> None:
    project = tmp_path / "api"
    project.mkdir()
    configure(home, '[autopilot]\nenabled = false\nquiet_after = 600\n[diagnosis]\n'
                    'mode = "timer"\n[[seats]]\nname = "api"\n'
                    f'cwd = "{project}"\nprimary = "toyagent"\n'
                    'backups = ["toyagent:toy-instant"]\nbrief = "You own the API service."\n')
    pane = toy(tmux, project)
    w = watch_off(tmux)                 # Autopilot off: the seat's failover is AI Diagnosis'
    try:
        w.wait_for(f"{pane}: idle")
        ref = pane if bound_as == "pane id" else tmux.pane(pane).target
        bound = pitcrew(tmux, "seat", "bind", "api", ref)
        assert bound.returncode == 0, bound.stdout + bound.stderr
        w.wait_for(f"{pane}: sits in seat api")
        tmux.type(pane, "quota 23:59" if dt.datetime.now().hour < 23 else "quota 22:59")
        w.wait_for(f"{pane}: rate_limit")
        pitcrew(tmux, "send", pane, "keep going")
        switched = wait_until(lambda: [r for r in rows(home)
                                       if r.badge.value == "Switched to backup"], timeout=60,
                              message=lambda: str(rows(home)))[0]
        w.wait_for("brief delivered", timeout=60)
        old_screen = tmux.screen(pane)
        time.sleep(4)                       # several scaled retry and backoff intervals
        assert tmux.screen(pane) == old_screen, "the old primary gets nothing more"
    finally:
        w.stop()
    new_pane = switched.readings["pane"]
    assert new_pane != pane and not tmux.pane(pane).dead
    assert "toy-instant" in tmux.screen(new_pane)
    prompts = typed_prompts(toy_home)
    briefs = [p for p in prompts if p.startswith("Pitcrew handover")]
    assert len(briefs) == 1, prompts
    assert "You own the API service." in briefs[0]
    assert "keep going" not in prompts                  # never typed into the limited agent
    assert tmux.screen(new_pane).count("◇ done: Pitcrew handover") == 1
