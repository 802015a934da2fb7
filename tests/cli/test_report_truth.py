"""`pitcrew report` and `pitcrew ledger` against a ledger whose truth is known: the figures a
user reads (restarts, incidents, the timeline, the axes, the readings), no secret in any of
them, and no row — however odd its text — that stops a reader or reaches the terminal raw."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pitcrew.supervisor.core.health import Health
from pitcrew.supervisor.core.records import Badge, Decision, TerminalState
from pitcrew.supervisor.store import state_store
from pitcrew.supervisor.store.ledger import Ledger

KEY = "sk-ant-api03-" + "Q" * 40
AWS = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
PROMPT = f"deploy with {KEY} and {AWS}"


def pitcrew(*args: str | bytes, home: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args],
                          capture_output=True, env=env, timeout=60)


def one_crash(pitcrew_home: Path, now: float) -> float:
    """One crash, resumed once and then asked to continue (incident 1); the agent process
    started 20 minutes before its first row. Returns the agent's start."""
    ledger = Ledger(pitcrew_home / "autopilot-ledger.jsonl")
    started, crash = now - 1800, now - 600

    def row(badge: Badge, at: float, reason: str, attempt: int, **readings: object) -> None:
        ledger.append(Decision(badge, at, "work:%3", "Claude Code", PROMPT,
                               f"/home/u/api{OSC52}", "process exited", reason, attempt,
                               {"incident": 1, **readings}))

    row(Badge.SCHEDULED, crash, "exited with status 1; resuming in 5 s", 0,
        wake_at=crash + 5, last_lines=["Traceback …", f"KeyError: {KEY}", AWS])
    row(Badge.RESUMED, crash + 6, "resumed the session (by id) in the same pane; attempt 1", 1)
    row(Badge.CONTINUED, crash + 9, "asked the resumed agent to continue", 1)
    state_store.save(pitcrew_home / "state.json", state_store.Snapshot(terminals={
        "srv:%3": TerminalState("work:%3", "Claude Code", "/home/u/api", Health.WORKING,
                                agent_started=started)}))
    return started


def test_the_report_figures_match_what_happened(pitcrew_home: Path, tmp_path: Path) -> None:
    now = dt.datetime.now().timestamp()
    started = one_crash(pitcrew_home, now)
    data = json.loads(pitcrew("report", "--json", home=tmp_path).stdout)
    [t] = data["terminals"]
    assert len(t["incidents"]) == 1
    assert sum(h["restarts"] for h in t["restarts_per_hour"]) == 1    # the continue is no restart
    assert t["timeline"][0]["start"] == pytest.approx(started)        # not the window's start
    text = pitcrew("report", home=tmp_path).stdout.decode()
    assert ": 1 incident, 1 restart" in text
    page = tmp_path / "r.html"
    out = pitcrew("report", "--html", str(page), home=tmp_path)
    assert out.stdout.decode().startswith(f"Wrote {page} (1 terminal, 1 incident, 0 anomalies)")
    html = page.read_text()
    assert "<b>1</b>incident<" in html and "<b>1</b>restart<" in html
    chart = re.search(r'<svg class="restarts-chart".*?</svg>', html, re.S)
    assert chart is not None
    labels = re.findall(r'<text x="[^"]*" y="86"[^>]*>([^<]*)</text>', chart.group(0))
    assert len(labels) == 2 and labels[0] != labels[1]               # 13:00 … 14:00
    wake = dt.datetime.fromtimestamp(now - 600 + 5).strftime("%Y-%m-%d %H:%M:%S")
    assert f"wake_at: {wake}" in html
    assert not re.search(r"wake_at: \d{9,}", html)                   # no raw epoch seconds


def test_no_secret_reaches_the_ledger_or_any_report(pitcrew_home: Path, tmp_path: Path) -> None:
    one_crash(pitcrew_home, dt.datetime.now().timestamp())
    written = (pitcrew_home / "autopilot-ledger.jsonl").read_text()
    assert KEY not in written and "wJalrXUtnFEMI" not in written
    assert written.count("[redacted]") == 8           # 2 in each row's prompt, 2 last words
    page = tmp_path / "r.html"
    outputs = [pitcrew("ledger", home=tmp_path).stdout, pitcrew("ledger", "--json",
                                                                 home=tmp_path).stdout,
               pitcrew("report", "--json", home=tmp_path).stdout,
               pitcrew("report", "--html", str(page), home=tmp_path).stdout]
    for said in [*(o.decode() for o in outputs), page.read_text()]:
        assert "sk-ant-api03" not in said and "wJalrXUtnFEMI" not in said


def test_rows_written_before_redaction_are_redacted_when_shown(pitcrew_home: Path,
                                                               tmp_path: Path) -> None:
    old = Decision(Badge.COULDNT_RESUME, dt.datetime.now().timestamp() - 60, "work:%3",
                   "Claude Code", PROMPT, "/p", "process exited", f"died: {AWS}", 1,
                   {"incident": 1, "last_lines": [KEY]}).to_json()
    (pitcrew_home / "autopilot-ledger.jsonl").write_text(json.dumps(old) + "\n")
    page = tmp_path / "r.html"
    outs = [pitcrew("ledger", home=tmp_path), pitcrew("ledger", "--json", home=tmp_path),
            pitcrew("report", "--json", home=tmp_path),
            pitcrew("report", "--html", str(page), home=tmp_path)]
    assert [o.returncode for o in outs] == [0, 0, 0, 0]
    for said in [*(o.stdout.decode() for o in outs), page.read_text()]:
        assert "sk-ant-api03" not in said and "wJalrXUtnFEMI" not in said


ODD = "\ud800 and \x1b]52;c;aGk=\x07 and \x9b31m and \u202e"


@pytest.fixture
def odd_ledger(pitcrew_home: Path) -> Path:
    """A row holding a lone surrogate and terminal escapes, and rows of the wrong shape."""
    at = dt.datetime.now().timestamp() - 120
    good = {"kind": "decision", "badge": "Resumed", "at": at, "terminal": "work:%3",
            "agent": "Claude Code", "prompt": f"fix {ODD}", "project": f"/p {ODD}",
            "trigger": "process exited", "reason": f"why {ODD}", "attempt": 1,
            "readings": {"incident": 1, "evidence": ODD}}
    lines = [json.dumps(good),                                       # \ud800 as JSON writes it
             json.dumps({**good, "badge": 5, "at": at + 1}),
             json.dumps({**good, "readings": ["x"], "at": at + 2}),
             json.dumps({**good, "attempt": "two", "at": at + 3}),
             json.dumps({**good, "prompt": {"x": 1}, "at": at + 4}),
             json.dumps({**good, "at": 1e300})]
    path = pitcrew_home / "autopilot-ledger.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("args", [("ledger",), ("ledger", "--json"), ("report",),
                                  ("report", "--json"), ("report", "--html", "{page}")])
def test_an_odd_row_is_shown_escaped_and_a_misshapen_one_skipped(
        odd_ledger: Path, tmp_path: Path, args: tuple[str, ...]) -> None:
    page = tmp_path / "r.html"
    out = pitcrew(*(a.format(page=page) for a in args), home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr == b""
    said = out.stdout + (page.read_bytes() if page.exists() else b"")
    said.decode("utf-8")                                              # valid UTF-8 throughout
    for raw in (b"\x1b", b"\x07", "\x9b".encode(), "\u202e".encode()):
        assert raw not in said
    if args == ("ledger", "--json"):
        rows = json.loads(out.stdout)
        assert len(rows) == 1 and rows[0]["prompt"].startswith("fix \\ud800 and \x1b]52")
    if args == ("report", "--json"):
        data = json.loads(out.stdout)
        assert data["skipped_rows"] == 5
        [incident] = data["terminals"][0]["incidents"]
        assert len(incident["rows"]) == 1
    if args == ("ledger",):
        assert "\\x1b]52;c;aGk=\\x07" in out.stdout.decode()


def test_send_refuses_text_that_is_not_utf8_in_one_line(tmp_path: Path) -> None:
    out = pitcrew("send", "--wait", "%1", b"fix \xff\xfe it", home=tmp_path)
    assert out.returncode == 2
    assert out.stderr.decode().strip() == "pitcrew: TEXT is not valid UTF-8 text; nothing sent"
    assert out.stdout == b""
