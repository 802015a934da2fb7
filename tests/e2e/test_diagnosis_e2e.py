"""AI Diagnosis end to end: deliveries, diagnosis, seat failover, notifications — the real
`pitcrew watch`, a real tmux server, the fake agent, a real notification daemon.

Waits are scaled with PITCREW_TEST_TIME_SCALE=0.1: a delivery is retried every 1.5 s here
(15 s for real; the core tests prove the real numbers).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pitcrew.supervisor.store.ledger import Ledger
from tests.support.proc import Running
from tests.support.tmux_server import FAKE_AGENT_DIR, TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
LIMIT = "limit resets 3pm (Europe/Paris)"


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path) -> Path:
    (pitcrew_home / "providers" / "fakebackup.toml").write_text(
        (FAKE_AGENT_DIR / "fakebackup.toml").read_text())
    return pitcrew_home


def configure(home: Path, mode: str, seat_cwd: Path | None = None, extra: str = "") -> None:
    seat = ""
    if seat_cwd is not None:
        seat = (f'\n[[seats]]\nname = "api"\ncwd = "{seat_cwd}"\nprimary = "fakeagent"\n'
                f'backups = ["fakebackup"]\nbrief = "You own the API service."\n')
    (home / "config.toml").write_text(
        f'[autopilot]\nenabled = false\nquiet_after = 600\n[diagnosis]\nmode = "{mode}"\n'
        f"{extra}{seat}")


def pitcrew(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args], capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=60)


def rows(home: Path) -> list:
    return list(reversed(Ledger(home / "autopilot-ledger.jsonl").tail(100)))


def diagnosed(home: Path):
    return wait_until(lambda: [r for r in rows(home) if r.badge.value == "Diagnosed"],
                      timeout=60, message=lambda: f"a Diagnosed row in {rows(home)}")[0]


def limited_agent(tmux: TmuxServer, cwd: Path) -> str:
    pane = tmux.start("fakeagent", cwd=cwd)
    tmux.wait_for_text(pane, "fake>")
    return pane


def watch(tmux: TmuxServer, env: dict[str, str] | None = None) -> Running:
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name,
                                "PITCREW_TEST_TIME_SCALE": "0.1", **(env or {})})
    w.wait_for("Autopilot:")
    tmux.wait_watched()
    return w


def test_a_stalled_delivery_is_retried_and_diagnosed_on_the_8th_failure_then_notified(
    tmux: TmuxServer, home: Path, tmp_path: Path, notifications: dict[str, str]
) -> None:
    configure(home, "timer")
    pane = limited_agent(tmux, tmp_path)
    w = watch(tmux, notifications)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, LIMIT)
        w.wait_for(f"{pane}: rate_limit")
        out = pitcrew("send", pane, "please", "also", "update", "the", "changelog",
                      env={"PITCREW_TMUX_SOCKET": tmux.name})
        assert out.returncode == 0 and "Queued for" in out.stdout
        row = diagnosed(home)
        w.wait_for("needs you: Messages to \"Fake Agent\" are not getting through")
    finally:
        w.stop()
    assert row.readings["failures"] == 8
    assert row.readings["checker"] == "local classifier (manual timer)"
    assert row.readings["state"] == "rate_limit"
    assert "please also update the changelog" not in tmux.screen(pane)   # never typed into it
    env = {**os.environ, **notifications}
    subprocess.run(["dunstctl", "close-all"], env=env, check=True)   # history: closed ones
    history = subprocess.run(["dunstctl", "history"], capture_output=True, text=True, env=env,
                             check=True).stdout
    summaries = [h["summary"]["data"] for h in json.loads(history)["data"][0]]
    assert 'Messages to "Fake Agent" are not getting through' in summaries


def test_a_delivery_to_a_ready_agent_is_typed_once_and_confirmed(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    configure(home, "ai")
    pane = limited_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        pitcrew("send", pane, "work 1", env={"PITCREW_TMUX_SOCKET": tmux.name})
        w.wait_for("message delivered")
        tmux.wait_for_text(pane, "● Done: work 1")
    finally:
        w.stop()
    records = [json.loads(line) for p in tmux.fake_home.rglob("*.jsonl")
               for line in p.read_text().splitlines()]
    assert [r["text"] for r in records if r["type"] == "prompt"] == ["work 1"]
    assert not [r for r in rows(home) if r.badge.value == "Diagnosed"]   # healthy: never checked


@pytest.mark.parametrize("bound_as", ["pane id", "session:window.pane"])
def test_a_seated_terminal_fails_over_to_its_backup_with_a_task_brief(
    tmux: TmuxServer, home: Path, tmp_path: Path, bound_as: str
) -> None:
    project = tmp_path / "api"
    project.mkdir()
    configure(home, "timer", seat_cwd=project)
    pane = limited_agent(tmux, project)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        ref = pane if bound_as == "pane id" else tmux.pane(pane).target
        bound = pitcrew("seat", "bind", "api", ref, env={"PITCREW_TMUX_SOCKET": tmux.name})
        assert bound.returncode == 0, bound.stdout + bound.stderr
        w.wait_for(f"{pane}: sits in seat api")
        tmux.type(pane, LIMIT)
        w.wait_for(f"{pane}: rate_limit")
        pitcrew("send", pane, "keep going", env={"PITCREW_TMUX_SOCKET": tmux.name})
        switched = wait_until(lambda: [r for r in rows(home)
                                       if r.badge.value == "Switched to backup"], timeout=60,
                              message=lambda: str(rows(home)))[0]
        w.wait_for("brief delivered", timeout=60)
        old_screen = tmux.screen(pane)
        time.sleep(3)                         # several scaled retry and backoff intervals
        assert tmux.screen(pane) == old_screen, "the old primary gets nothing more"
    finally:
        w.stop()
    new_pane = switched.readings["pane"]
    assert new_pane != pane and not tmux.pane(pane).dead      # the old pane stays open
    assert switched.readings["to"] == "fakebackup"
    prompts = [json.loads(line) for p in tmux.fake_home.rglob("*.jsonl")
               for line in p.read_text().splitlines()]
    briefs = [r["text"] for r in prompts if r["type"] == "prompt"
              and r["text"].startswith("Pitcrew handover")]
    assert len(briefs) == 1
    assert f'"{LIMIT}"' in briefs[0] and "You own the API service." in briefs[0]
    assert "do not redo finished steps" in briefs[0].lower()
    seats = json.loads(pitcrew("seat", "list", "--json",
                               env={"PITCREW_TMUX_SOCKET": tmux.name}).stdout)
    assert seats[0]["holder"] == "fakebackup"                # nothing switches back by itself


def stall_until_diagnosed(tmux: TmuxServer, home: Path, cwd: Path, fakes, prompt: str):
    """A limited agent (fake checker CLIs first on PATH) gets a message that cannot be
    delivered until the 8th failure sends it to diagnosis; returns the Diagnosed row."""
    pane = limited_agent(tmux, cwd)
    w = watch(tmux, {"PATH": f"{fakes.bin}{os.pathsep}{os.environ['PATH']}"})
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, prompt)
        w.wait_for(f"{pane}: rate_limit")
        pitcrew("send", pane, "go on", env={"PITCREW_TMUX_SOCKET": tmux.name})
        return diagnosed(home)
    finally:
        w.stop()


def test_without_consent_no_checker_runs(tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    from tests.test_checkers import Fakes

    (tmp_path / "checkers").mkdir()
    fakes = Fakes(tmp_path / "checkers")
    fakes.install("claude")
    configure(home, "ai")
    row = stall_until_diagnosed(tmux, home, tmp_path, fakes, LIMIT)
    assert row.readings["checker"] == "local classifier (no consent)"
    assert row.readings["consent"] is False
    assert fakes.runs() == []


def test_with_consent_a_checker_cli_reads_the_screen_and_answers(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    from tests.test_checkers import Fakes

    (tmp_path / "checkers").mkdir()
    fakes = Fakes(tmp_path / "checkers")
    fakes.install("codex", "limit")                 # the first checker hits its own limit
    fakes.install("claude", "json", answer={"state": "rate_limit", "reason": "usage limit",
                                            "reset_at": None})
    configure(home, "ai", extra='checkers = ["codex", "claude:opus"]\n')
    pitcrew("consent", "grant", env={"PITCREW_TMUX_SOCKET": tmux.name})
    row = stall_until_diagnosed(tmux, home, tmp_path, fakes, LIMIT + " sk-ant-api03-" + "x" * 40)
    assert row.readings["checker"] == "claude"
    assert [a["outcome"] for a in row.readings["attempts"]] == ["limit", "answered"]
    assert row.readings["state"] == "rate_limit" and row.readings["seconds"] >= 0
    [run] = fakes.runs("claude")
    assert "--model" in run["argv"] and "opus" in run["argv"]
    assert "sk-ant-api03-" not in json.dumps(run)          # redacted before it left
    assert run["cwd_listing"] == [] and not run["cwd"].startswith(str(tmp_path))


def test_manual_timer_mode_restarts_on_the_timeout_alone(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    (home / "config.toml").write_text(
        '[autopilot]\nenabled = true\nquiet_after = 20\n[diagnosis]\nmode = "timer"\n')
    pane = limited_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "hang")           # a spinner that stops moving: looks busy, is stuck
        w.wait_for(f"{pane}: busy")
        resumed = wait_until(lambda: [r for r in rows(home) if r.badge.value == "Resumed"],
                             timeout=60, message=lambda: str(rows(home)))[0]
    finally:
        w.stop()
    assert resumed.trigger == "task went quiet" and resumed.prompt == "hang"
