"""Shared pieces of the fault-injection suite: the real `pitcrew watch` with faults injected
(`inject/sitecustomize.py`), and what a user would look at afterwards (ledger rows, what the
fake agent received, state.json).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pitcrew.supervisor.store.ledger import Ledger
from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

INJECT = Path(__file__).resolve().parent / "inject"
SCALE = "0.1"       # PITCREW_TEST_TIME_SCALE: the 5/20/60 s ladder takes 0.5/2/6 s


def watch(tmux: TmuxServer, faults: dict[str, Any] | None = None, scale: str = SCALE,
          env: dict[str, str] | None = None, ready: str = "Autopilot:") -> Running:
    """The real watcher; `faults` (see inject/sitecustomize.py) are written next to PITCREW_HOME
    and handed over by one variable the watcher drops at once."""
    extra = {"PITCREW_TMUX_SOCKET": tmux.name, "PITCREW_TEST_TIME_SCALE": scale, **(env or {})}
    if faults:
        spec = tmux.root / f"faults-{len(list(tmux.root.glob('faults-*')))}.json"
        spec.write_text(json.dumps(faults))
        extra["PITCREW_FAULTS"] = str(spec)
        extra["PYTHONPATH"] = os.pathsep.join(filter(None, [str(INJECT),
                                                             os.environ.get("PYTHONPATH")]))
    w = Running(["watch"], env=extra)
    if ready:
        w.wait_for(ready)
        tmux.wait_watched()
    return w


def rows(home: Path) -> list[Any]:
    """Ledger rows, oldest first."""
    return list(reversed(Ledger(home / "autopilot-ledger.jsonl").tail(1000)))


def badges(home: Path, *, scheduled: bool = False) -> list[str]:
    return [r.badge.value for r in rows(home) if scheduled or r.badge.value != "Scheduled"]


def wait_badges(home: Path, *expected: str, timeout: float = 40) -> list[Any]:
    """Wait until the ledger (without `Scheduled` rows) starts with `expected`."""
    wait_until(lambda: badges(home)[: len(expected)] == list(expected), timeout,
               message=lambda: f"ledger {badges(home)} to start with {list(expected)}")
    return [r for r in rows(home) if r.badge.value != "Scheduled"]


def agent_records(tmux: TmuxServer, kind: str | None = None) -> list[dict[str, Any]]:
    """What the fake agents wrote to their session files (prompts they received, crashes)."""
    out: list[dict[str, Any]] = []
    for path in sorted(tmux.fake_home.rglob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in out if kind is None or r.get("type") == kind]


def prompts(tmux: TmuxServer) -> list[str]:
    return [r["text"] for r in agent_records(tmux, "prompt")]


def start_agent(tmux: TmuxServer, cwd: Path, command: str = "fakeagent") -> str:
    pane = tmux.start(command, cwd=cwd)
    tmux.wait_for_text(pane, "fake>")
    return pane


def killed(w: Running, timeout: float = 40) -> None:
    """Wait for the watcher to SIGKILL itself at its fault point."""
    code = w.proc.wait(timeout)
    assert code == -9, f"the watcher was not killed at its fault point (exit {code}):\n" + \
        "\n".join(w.lines)
    w.stop()
