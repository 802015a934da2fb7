"""A small, real history for the incident report's tests: ledger rows written by the real
`Ledger` (rotated once, then a torn line and a foreign line), a state.json written by the
real `state_store`, and Claude Code and Codex session files in the CLIs' own formats under a
HOME of its own.

Terminal `work:%3` (Claude Code) crashed three times in a row (a crash loop, the last resume
did not start), was diagnosed by two checkers (one timed out), hit the usage limit twice,
used a token spike's worth of tokens once, and got a row of a kind this version does not know
(a newer Pitcrew's task timeout). Terminal `work:%5` (Codex) went quiet once and was
continued; its prompt is hostile HTML.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from pitcrew.supervisor.core.health import Health
from pitcrew.supervisor.core.records import Badge, Decision, TerminalState
from pitcrew.supervisor.store import state_store
from pitcrew.supervisor.store.ledger import Ledger

CLAUDE_SID = "5b0f4c2e-7d1a-4e8b-9c3f-2a6d8e1f4b70"
CODEX_SID = "01a22e6d-0000-7270-8558-3584d590e97b"
PROJECT = "/home/user/work/api"
HOSTILE = '<img src="https://evil.example/x.png"><script>alert(1)</script> fix the tests'
SPIKE_TOKENS = 900_000


@dataclass(frozen=True)
class Scenario:
    now: float
    home: Path           # the HOME whose CLI folders hold the session files
    ledger: Path


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(at))


def write(pitcrew_home: Path, home: Path, now: float | None = None) -> Scenario:
    now = time.time() if now is None else now
    h = 3600.0
    path = pitcrew_home / "autopilot-ledger.jsonl"
    ledger = Ledger(path, max_bytes=4000)      # small: the first rows go to a rotated file
    task = "add rate limiting to the login endpoint"

    def row(badge: Badge, ago: float, trigger: str, reason: str, attempt: int = 0,
            terminal: str = "work:%3", agent: str = "Claude Code", prompt: str = task,
            **readings: object) -> None:
        ledger.append(Decision(badge, now - ago, terminal, agent, prompt, PROJECT, trigger,
                               reason, attempt, readings))

    for n, ago in enumerate((5.0 * h, 4.98 * h, 4.96 * h), start=1):
        row(Badge.SCHEDULED, ago, "process exited", "exited with status 1; resuming in 5 s",
            0, incident=n, screen="crashed", evidence="Error: ECONNRESET")
        row(Badge.RESUMED, ago - 5, "process exited", "resumed the session (by id) in the "
            "same pane; watching", 1, incident=n)
    row(Badge.SCHEDULED, 4.95 * h, "process exited", "3 crashes within 120s: cooling down "
        "120 s", 1, incident=3, screen="crashed")
    row(Badge.COULDNT_RESUME, 4.9 * h, "process exited", "the resumed agent did not start",
        2, incident=3)
    row(Badge.DIAGNOSED, 3.0 * h, "task went quiet", "codex says rate_limit in 8.2s", 0,
        checker="codex", seconds=68.4, state="rate_limit", consent=True,
        evidence="You've hit your usage limit", attempts=[
            {"checker": "claude", "model": "sonnet", "outcome": "timeout", "seconds": 60.0,
             "detail": "killed after 60 s"},
            {"checker": "codex", "model": None, "outcome": "answered", "seconds": 8.2,
             "detail": "rate_limit"}])
    row(Badge.SCHEDULED, 3.0 * h - 2, "task went quiet", "usage limit: resuming at 14:00",
        0, incident=4, screen="rate_limit", reset_at="2026-12-01T14:00:00+00:00")
    row(Badge.CONTINUED, 2.5 * h, "task went quiet", "the agent is ready again: asked it to "
        "continue", 1, incident=4, screen="idle")
    row(Badge.SCHEDULED, 1.0 * h, "task went quiet", "usage limit: resuming at 19:00", 0,
        incident=5, screen="rate_limit", reset_at="2026-12-01T19:00:00+00:00")
    row(Badge.CONTINUED, 0.8 * h, "task went quiet", "the agent is ready again: asked it to "
        "continue", 1, incident=5, screen="idle")
    row(Badge.TYPED, 2.0 * h, "message", "typed a queued message", terminal="work:%5",
        agent="Codex CLI", prompt="run the linter", delivery_id="m-1")
    row(Badge.CONTINUED, 1.5 * h, "task went quiet", "continued in place with the CLI's own "
        "message", 1, terminal="work:%5", agent="Codex CLI", prompt=HOSTILE, incident=1,
        screen="continue_prompt", evidence=HOSTILE)
    with open(path, "a", encoding="utf-8") as fh:   # rows this version cannot parse
        fh.write(json.dumps({"kind": "decision", "badge": "Held", "at": now - 0.3 * h,
                             "terminal": "work:%3", "agent": "Claude Code", "prompt": task,
                             "project": PROJECT, "trigger": "hard timeout",
                             "reason": "running for 30 min: holding this terminal",
                             "attempt": 0, "readings": {"incident": 6}}) + "\n")
        fh.write("this is not json\n")
        fh.write('{"kind": "decision", "badge": "Resumed", "at": 17')   # torn: no newline
    state_store.save(pitcrew_home / "state.json", state_store.Snapshot(terminals={
        "srv:%3": TerminalState("work:%3", "Claude Code", PROJECT, Health.WORKING,
                                session_id=CLAUDE_SID),
        "srv:%5": TerminalState("work:%5", "Codex CLI", PROJECT, Health.WORKING,
                                session_id=CODEX_SID)}))
    _claude_session(home, now)
    _codex_session(home, now)
    return Scenario(now, home, path)


def _claude_session(home: Path, now: float) -> None:
    folder = home / ".claude" / "projects" / PROJECT.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for n in range(36):                          # a call every 10 minutes for 6 hours
        at = now - 6 * 3600 + n * 600
        usage = {"input_tokens": 1200, "cache_read_input_tokens": 18000,
                 "cache_creation_input_tokens": 800, "output_tokens": 400}
        if n == 24:                              # two hours ago: a spike
            usage["cache_creation_input_tokens"] = SPIKE_TOKENS
        for block in ("text", "tool_use"):       # Claude repeats the usage per block
            lines.append({"type": "assistant", "timestamp": _iso(at), "sessionId": CLAUDE_SID,
                          "cwd": PROJECT, "message": {"id": f"msg_{n}", "role": "assistant",
                                                      "content": [{"type": block}],
                                                      "usage": usage}})
    (folder / f"{CLAUDE_SID}.jsonl").write_text(
        "\n".join(json.dumps(x) for x in lines) + "\n")


def _codex_session(home: Path, now: float) -> None:
    day = time.strftime("%Y/%m/%d", time.gmtime(now))
    folder = home / ".codex" / "sessions" / day
    folder.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, object]] = [{"timestamp": _iso(now - 3 * 3600), "type": "session_meta",
                                       "payload": {"id": CODEX_SID, "cwd": PROJECT}},
                                      {"timestamp": _iso(now - 3 * 3600), "type": "event_msg",
                                       "payload": {"type": "token_count", "info": None}}]
    for n in range(1, 4):
        total = {"input_tokens": 10000 * n, "cached_input_tokens": 6000 * n,
                 "output_tokens": 500 * n, "total_tokens": 10500 * n}
        lines.append({"timestamp": _iso(now - 3 * 3600 + n * 60), "type": "event_msg",
                      "payload": {"type": "token_count", "info": {"total_token_usage": total}}})
    name = f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', time.gmtime(now))}-{CODEX_SID}.jsonl"
    (folder / name).write_text("\n".join(json.dumps(x) for x in lines) + "\n")
