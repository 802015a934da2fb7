"""Capture screens where an earlier turn's error is still on screen (issue #12, blind spot 1).

The agent hits an error (a usage limit, a 401), then a new prompt succeeds: the old error stays
above while the agent is busy again and then idle again. Labels follow the current turn.

Run through capture_variants.py (it picks the CLI version, the pane size and writes to
tests/fixtures/screens/incoming/)::

    .venv/bin/python tests/capture/capture_variants.py --cli claude --script turns \\
        --set /tmp/i12-cli/set-new --width 200 --height 50 -- --cli claude
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capture_claude as cc
import capture_codex as cx
from capsession import Session, Standin


def claude_started(c: cc.Claude) -> tuple[Session, Standin, str]:
    s = c.session("turns", seed=True)
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_anthropic.py", log)
    cwd = cc.work_dir(s, "proj")
    pane = s.shell_pane(cwd, "turns", {"ANTHROPIC_BASE_URL": api.url,
                                       "ANTHROPIC_API_KEY": cc.KEY})
    s.wait(pane, "$ ", 10)
    s.type(pane, f"'{c.bin}'", enter=True)
    s.wait(pane, "trust this folder", 40)
    time.sleep(1.0)
    scr = s.screen(pane)
    if "❯ No, exit" in scr:
        s.keys(pane, "Down")
        time.sleep(0.4)
    s.keys(pane, "Enter")
    scr = s.wait(pane, lambda x: "Detected a custom API key" in x or cc.idle(x), 40)
    if "Detected a custom API key" in scr:
        s.keys(pane, "Up")
        time.sleep(0.3)
        s.keys(pane, "Enter")
    s.wait(pane, cc.idle, 40)
    return s, api, pane


def claude_turns() -> None:
    c = cc.Claude("claude", "")
    s, api, pane = claude_started(c)
    try:
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and cc.idle(x), 60)
        api.set_mode("usage_limit")   # (a marker would ride along: Claude merges the failed
        s.type(pane, "go on", enter=True)   # turn's prompt into the next user message)
        s.wait(pane, lambda x: "limit" in x.lower() and cc.idle(x), 60)
        time.sleep(1.5)
        s.shot(pane, "turns_usage_limit_current", "rate_limit",
               "stand-in answered 429 with a usage-limit body", evidence="limit")
        api.set_mode("normal")
        s.type(pane, "try again now", enter=True)
        s.wait(pane, lambda x: x.count("Hello from the stand-in") >= 2 and cc.idle(x), 60)
        time.sleep(1.5)
        s.shot(pane, "turns_old_limit_above_reply", "idle",
               "the limit from the turn before is still on screen; the newest prompt was "
               "answered", hard_negative=True,
               notes="issue #12 blind spot 1: an earlier turn's error above the current turn")
        s.type(pane, "refactor the parser [[slow]]", enter=True)
        s.wait(pane, "esc to interrupt", 30)
        time.sleep(4)
        s.shot(pane, "turns_old_limit_above_streaming", "busy",
               "streaming a new answer with the earlier limit still on screen",
               hard_negative=True, notes="issue #12 blind spot 1")
        cc.interrupt(s, pane)
    finally:
        api.stop()
        s.kill_all()


def codex_turns() -> None:
    c = cx.Codex()
    s, api, pane, _cwd, _hooks, _log = cx.start_seeded(c, "proj", hooks=False)
    try:
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and cx.idle(x), 90)
        s.type(pane, "go on [[usage_limit]]", enter=True)
        s.wait(pane, lambda x: "usage limit" in x, 60)
        time.sleep(2)
        if "enter select" in s.screen(pane) or "Keep current model" in s.screen(pane):
            s.keys(pane, "Escape")
            time.sleep(1.5)
        s.shot(pane, "turns_usage_limit_current", "rate_limit",
               "HTTP 429 usage_limit_reached", evidence="usage limit")
        cx.clear_input(s, pane)
        s.type(pane, "try again now", enter=True)
        s.wait(pane, lambda x: x.count("Hello from the stand-in") >= 2 and cx.idle(x), 90)
        time.sleep(1.5)
        s.shot(pane, "turns_old_limit_above_reply", "idle",
               "the limit from the turn before is still on screen; the newest prompt was "
               "answered", hard_negative=True,
               notes="issue #12 blind spot 1: an earlier turn's error above the current turn")
        s.type(pane, "refactor the parser [[slow]]", enter=True)
        s.wait(pane, "Working through the refactor", 30)
        time.sleep(3)
        s.shot(pane, "turns_old_limit_above_streaming", "busy",
               "streaming a new answer with the earlier limit still on screen",
               hard_negative=True, notes="issue #12 blind spot 1")
        cx.interrupt(s, pane)
    finally:
        api.stop()
        s.kill_all()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", choices=("claude", "codex"), required=True)
    args = ap.parse_args()
    {"claude": claude_turns, "codex": codex_turns}[args.cli]()


if __name__ == "__main__":
    main()
