"""Capture real Codex CLI screens, process tree, session files and headless behaviour.

Needs tmux, node/npm and the CLI under /tmp/realcli (override with PITCREW_REALCLI)::

    npm install --prefix /tmp/realcli/codex @openai/codex

Run from the repo root with the project venv (psutil)::

    .venv/bin/python tests/capture/capture_codex.py                  # all scenes
    .venv/bin/python tests/capture/capture_codex.py --only main,small

Scenes: onboarding, main, upgrade, small, exits, headless, help (see SCENES). Each scene starts
tests/capture/standin_openai_responses.py on 127.0.0.1 and a throwaway HOME. The HOME is made
under /var/tmp (not /tmp) because Codex refuses to set up its helper binaries under the temp
dir and prints a WARNING line above the TUI otherwise. Codex is pointed at the stand-in with
``openai_base_url`` in ~/.codex/config.toml and an API-key auth.json (``sk-test-0000``).
Fixtures: tests/fixtures/screens/codex/, sessions/codex/, processes/codex.json,
cli-help/codex.txt; facts for the notes in /tmp/realcli/codex-facts.json. Every process and the
tmux server it started are killed at the end.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capkit
from capsession import (
    REALCLI,
    Session,
    Standin,
    copy_help,
    copy_session_sample,
    run_help,
    write_json,
)

FACTS: dict[str, Any] = {}
KEY = "sk-test-0000"
BUSY = "esc to interrupt"


def idle(screen: str) -> bool:
    return BUSY not in screen and "? for shortcuts" in screen


def has_exit(screen: str) -> bool:
    return bool(re.search(r"exit=\d+\n", screen))


def last_exit(screen: str) -> str | None:
    found = re.findall(r"exit=(\d+)", screen)
    return found[-1] if found else None


class Codex:
    def __init__(self) -> None:
        self.bin = REALCLI / "codex" / "node_modules" / ".bin" / "codex"
        out = subprocess.run([str(self.bin), "--version"], capture_output=True, text=True).stdout
        self.version = out.split()[-1] if out else "unknown"

    def session(self, width: int = 120, height: int = 40) -> Session:
        base = Path("/var/tmp/pitcrew-capture")
        base.mkdir(parents=True, exist_ok=True)
        tempfile.tempdir = str(base)
        try:
            return Session("codex", self.version, "capture_codex.py", width=width, height=height)
        finally:
            tempfile.tempdir = None

    @staticmethod
    def seed(s: Session, url: str, trusted: list[Path], extra: str = "") -> None:
        d = s.home / ".codex"
        d.mkdir(parents=True, exist_ok=True)
        (d / "auth.json").write_text(json.dumps({"auth_mode": "apikey", "OPENAI_API_KEY": KEY}))
        lines = [f'openai_base_url = "{url}/v1"', "", "[tui]",
                 "screen_reader_detection_done = true", ""]
        for p in trusted:
            lines += [f'[projects."{p}"]', 'trust_level = "trusted"', ""]
        (d / "config.toml").write_text("\n".join(lines) + extra)


def work_dir(s: Session, name: str, git: bool = True) -> Path:
    d = s.home.parent / f"{s.home.name}-work" / name
    d.mkdir(parents=True, exist_ok=True)
    if git and not (d / ".git").exists():
        subprocess.run(["git", "init", "-q", str(d)], check=False)
    return d


def clear_input(s: Session, pane: str) -> None:
    for _ in range(3):
        s.keys(pane, "C-u")
        time.sleep(0.1)
    for _ in range(3):
        s.keys(pane, "C-k")
        time.sleep(0.1)


def interrupt(s: Session, pane: str) -> None:
    s.keys(pane, "Escape")
    time.sleep(1.0)
    s.wait(pane, lambda x: BUSY not in x, 15, quiet=True)
    time.sleep(0.5)
    clear_input(s, pane)


def shown_state(screen: str, cause: str) -> str:
    """Label by what is visible: a bare 'Working (… esc to interrupt)' is still just busy."""
    if BUSY in screen and not re.search(r"econnecting|etry|\d{3} [A-Z]", screen.split("›")[-2]
                                        if screen.count("›") >= 2 else screen):
        return "busy"
    return cause


def retry_secs(screen: str) -> int | None:
    m = re.search(r"(?:retrying|Retrying|try again) in (\d+)\s*s", screen)
    return int(m.group(1)) if m else None


# ------------------------------------------------------------------------------------------


def scene_onboarding(c: Codex) -> None:
    """No auth: the login picker and its sub-screens, then trust and the empty prompt."""
    s = c.session()
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_openai_responses.py", log)
    try:
        cwd = work_dir(s, "proj")
        (s.home / ".codex").mkdir()
        (s.home / ".codex" / "config.toml").write_text(f'openai_base_url = "{api.url}/v1"\n')
        pane = s.pane(str(c.bin), cwd, "onb", {"BROWSER": "true"})
        s.wait(pane, "Sign in with ChatGPT", 40)
        time.sleep(1)
        s.shot(pane, "login_picker", "login_required", "first start, no auth.json",
               evidence="Sign in with ChatGPT")
        s.keys(pane, "Enter")
        time.sleep(3)
        s.shot(pane, "chatgpt_signin_waiting", "login_required",
               "chose 'Sign in with ChatGPT'; the browser cannot open (BROWSER=true, offline)")
        s.keys(pane, "Escape")
        time.sleep(1.5)
        s.keys(pane, "Down")
        time.sleep(0.3)
        s.keys(pane, "Enter")
        time.sleep(5)
        s.shot(pane, "device_code_offline", "login_required",
               "chose 'Sign in with Device Code' with no network")
        # 'Sign in another way' -> API key, in a fresh pane (the error above sticks)
        pane = s.pane(str(c.bin), cwd, "onb2", {"BROWSER": "true"})
        s.wait(pane, "Sign in with ChatGPT", 40)
        time.sleep(1)
        for _ in range(2):
            s.keys(pane, "Down")
            time.sleep(0.3)
        s.keys(pane, "Enter")
        s.wait(pane, "Use an OpenAI API key", 10)
        time.sleep(1)
        s.shot(pane, "login_other_way", "login_required", "'Sign in another way' sub-menu")
        s.keys(pane, "Enter")
        s.wait(pane, "Paste or type your API key", 15)
        time.sleep(0.5)
        s.shot(pane, "api_key_entry", "login_required", "API key entry box",
               notes="the box shows the placeholder 'Paste or type your API key'")
        s.type(pane, KEY)
        time.sleep(0.3)
        s.keys(pane, "Enter")
        s.wait(pane, "Trust this folder", 20)
        time.sleep(0.5)
        s.shot(pane, "trust_folder", "picker", "after login, first start in this folder",
               evidence="Trust this folder")
        s.keys(pane, "Enter")
        s.wait(pane, idle, 30)
        time.sleep(2)
        s.shot(pane, "welcome", "idle", "first start after login and trust",
               evidence="Ask Codex to do anything",
               notes="'› Ask Codex to do anything' is the dim placeholder of the empty composer")
    finally:
        api.stop()
        s.kill_all()


def scene_main(c: Codex) -> None:
    s = c.session()
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_openai_responses.py", log)
    try:
        cwd = work_dir(s, "my proj_v1.2")
        c.seed(s, api.url, [cwd])
        hooks_dir = s.home / "hook-payloads"
        hooks_dir.mkdir()
        cmd = f"cat > {hooks_dir}/$(date +%s%N)-{{ev}}.json"
        hooks = {"hooks": {ev: [{"hooks": [{"type": "command", "command": cmd.format(ev=ev),
                                            "timeout": 10}]}]
                           for ev in ("SessionStart", "UserPromptSubmit", "PreToolUse",
                                      "PermissionRequest", "PostToolUse", "Stop")}}
        (s.home / ".codex" / "hooks.json").write_text(json.dumps(hooks, indent=2))
        with open(s.home / ".codex" / "config.toml", "a") as fh:
            fh.write("\n[features]\ncodex_hooks = true\n")
        pane = s.shell_pane(cwd, "main")
        s.wait(pane, "$ ", 10)
        s.type(pane, f"'{c.bin}'", enter=True)
        # The hooks review popup comes once the app-server daemon is up (~15-20 s).
        scr = s.wait(pane, "Hooks need review", 90)
        time.sleep(1)
        s.shot(pane, "hooks_review_prompt", "picker",
               "~/.codex/hooks.json with 6 untrusted hooks (features.codex_hooks = true)",
               evidence="Hooks need review")
        FACTS["hooks_start_screen"] = scr.strip()[-1500:]
        s.keys(pane, "Down")
        time.sleep(0.4)
        s.keys(pane, "Enter")  # 2. Trust all and continue
        s.wait(pane, lambda x: idle(x) and "Hooks need review" not in x, 30)
        time.sleep(1)
        s.shot(pane, "welcome_seeded", "idle", "auth.json + trusted project seeded",
               evidence="Ask Codex to do anything")
        s.type(pane, "fix the failing test in utils.py")
        time.sleep(1)
        s.shot(pane, "single_line", "draft", "typed, not sent")
        clear_input(s, pane)
        s.type(pane, "first line of a longer request")
        s.keys(pane, "C-j")
        s.type(pane, "second line: also update the changelog")
        time.sleep(1)
        s.shot(pane, "multi_line", "draft", "typed with Ctrl-J for the newline, not sent")
        clear_input(s, pane)
        clear_input(s, pane)
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 60)
        time.sleep(1)
        s.shot(pane, "after_reply", "idle", "normal streamed reply finished")
        # process tree again, now that a turn ran (code-mode host may exist)
        save_codex_tree(s, pane, c.version)
        s.type(pane, "refactor the parser [[slow]]", enter=True)
        s.wait(pane, "Working through the refactor", 30)
        time.sleep(4)
        scr = s.screen(pane)
        s.shot(pane, "streaming", "busy", "stand-in streams text slowly (about 60 s in all)",
               evidence=BUSY if BUSY in scr else None, hard_negative=BUSY not in scr,
               notes=None if BUSY in scr else
               "Codex hides its 'Working (… esc to interrupt)' status row while assistant text "
               "streams: the composer shows the placeholder, so the screen looks idle")
        s.keys(pane, "Escape")
        time.sleep(2)
        s.shot(pane, "after_interrupt", "idle" if idle(s.screen(pane)) else "unknown",
               "Esc during a streamed reply", notes="check whether the prompt was put back")
        clear_input(s, pane)
        s.type(pane, "look at the logs [[stall]]", enter=True)
        s.wait(pane, BUSY, 30)
        time.sleep(20)
        s.shot(pane, "stalled_stream_20s", "busy", "response.created then nothing, 20 s in")
        time.sleep(70)
        scr = s.screen(pane)
        s.shot(pane, "stalled_stream_90s", "busy" if BUSY in scr else "connection_lost",
               "same stalled stream, 90 s in")
        interrupt(s, pane)
        s.type(pane, "delete the scratch file [[tool]]", enter=True)
        s.wait(pane, "Would you like to run the following command?", 40)
        time.sleep(1)
        s.shot(pane, "approval_exec_command", "question",
               "stand-in sent an exec (code-mode) call of exec_command with require_escalated",
               evidence="Would you like to run the following command?")
        s.keys(pane, "Escape")
        time.sleep(2)
        s.wait(pane, idle, 20, quiet=True)
        clear_input(s, pane)
        # request_user_input (Plan mode only, per its description): try in default mode
        s.type(pane, "set up caching [[question]]", enter=True)
        scr = s.wait(pane, lambda x: "Which database" in x or idle(x), 40, quiet=True)
        time.sleep(2)
        scr = s.screen(pane)
        if "Which database" in scr:
            s.shot(pane, "request_user_input", "question",
                   "stand-in called request_user_input", evidence="Which database")
            s.keys(pane, "Escape")
            time.sleep(1.5)
        FACTS["request_user_input_default_mode"] = scr.strip()[-800:]
        interrupt(s, pane)
        s.type(pane, "write the retry helper [[code429]]", enter=True)
        s.wait(pane, lambda x: "back off" in x and idle(x), 60)
        time.sleep(1)
        s.shot(pane, "code_mentions_429", "idle", "reply with code mentioning 429/rate limit",
               hard_negative=True)
        s.type(pane, "write it again [[code429_stall]]", enter=True)
        s.wait(pane, "rate limit exceeded", 60)
        time.sleep(3)
        s.shot(pane, "code_mentions_429_streaming", "busy",
               "code mentioning 429/rate limit streaming, then stalled", hard_negative=True)
        interrupt(s, pane)
        for mode, state, how in (
                ("429", "rate_limit", "HTTP 429 rate_limit_exceeded, retry-after: 20"),
                ("429_bare", "rate_limit", "HTTP 429 rate_limit_exceeded, no headers"),
                ("500", "connection_lost", "HTTP 500 server_error"),
                ("503", "connection_lost", "HTTP 503 server_overloaded")):
            s.type(pane, f"continue [[{mode}]]", enter=True)
            scr = s.wait(pane, lambda x: "Reconnecting" in x or "etrying" in x or
                         ("■" in x and idle(x)), 60, quiet=True)
            time.sleep(1.5)
            scr = s.screen(pane)
            live = BUSY in scr
            shown = state if not live or "econnecting" in scr or "etry" in scr else "busy"
            s.shot(pane, f"{mode}_{'retrying' if live else 'final'}", shown, how,
                   retry_after=retry_secs(scr),
                   notes=None if shown == state else
                   "only 'Working (Ns • esc to interrupt)' so far: the retry is not visible yet")
            if live:
                scr = s.wait(pane, idle, 300, quiet=True)
                time.sleep(1)
                if idle(scr):
                    s.shot(pane, f"{mode}_final", state, how + "; Codex gave up retrying")
            interrupt(s, pane)
        s.type(pane, "continue [[quota]]", enter=True)
        s.wait(pane, lambda x: "quota" in x.lower() and idle(x), 120, quiet=True)
        time.sleep(1)
        s.shot(pane, "insufficient_quota", "rate_limit",
               "HTTP 429 insufficient_quota (API key out of credits)")
        clear_input(s, pane)
    finally:
        api.stop()
        s.kill_all()


def scene_limits(c: Codex) -> None:
    """Usage warning headers, usage_limit_reached, 401, connection refused."""
    s, api, pane, _cwd, _hooks_dir, _log = start_seeded(c, "proj", hooks=False)
    try:
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 90)
        s.type(pane, "hello [[usage_warning]]", enter=True)
        s.wait(pane, lambda x: x.count("Hello from the stand-in") >= 2 and idle(x), 60,
               quiet=True)
        time.sleep(1.5)
        scr = s.screen(pane)
        if "Keep current model" in scr:
            s.shot(pane, "usage_warning_switch_model", "rate_limit",
                   "reply with x-codex-primary-used-percent: 91 / secondary 76",
                   evidence="Heads up, you have less than",
                   notes="the 'Heads up … limit left' warning is followed by the 'Approaching "
                         "rate limits / Switch to …?' menu, which waits for a key; a menu about "
                         "a limit is rate_limit (FORMAT.md), though the limit is only near")
            s.keys(pane, "Escape")
            time.sleep(1.5)
        s.shot(pane, "usage_warning", "idle",
               "reply with x-codex-primary-used-percent: 91 / secondary 76 (picker closed)",
               evidence="Heads up, you have less than")
        s.type(pane, "more [[slow]]", enter=True)
        s.wait(pane, "Working through the refactor", 30)
        time.sleep(3)
        s.shot(pane, "usage_warning_streaming", "busy", "busy after the usage-warning reply")
        interrupt(s, pane)
        t0 = time.time()
        s.type(pane, "go on [[usage_limit]]", enter=True)
        scr = s.wait(pane, lambda x: "usage limit" in x, 60)
        time.sleep(2)
        scr = s.screen(pane)
        reset = dt.datetime.fromtimestamp(-(-int(t0 + 7200) // 60) * 60, dt.UTC)
        menu = "enter select" in scr or "Keep current model" in scr
        s.shot(pane, "usage_limit_switch_model" if menu else "usage_limit", "rate_limit",
               "HTTP 429 usage_limit_reached (plan_type plus, resets_at in 2 h)",
               reset_at=reset.isoformat(), evidence="hit your usage limit",
               notes="the limit line is followed by the 'Approaching rate limits / Switch to "
                     "…?' model picker" if menu else None)
        if menu:
            s.keys(pane, "Escape")
            time.sleep(1.5)
            s.shot(pane, "usage_limit", "rate_limit", "same, after Esc closed the picker",
                   reset_at=reset.isoformat(), evidence="hit your usage limit")
        clear_input(s, pane)
        api.set_mode("401")
        s.type(pane, "hello again", enter=True)
        s.wait(pane, lambda x: ("401" in x or "API key" in x) and idle(x), 120, quiet=True)
        time.sleep(1)
        s.shot(pane, "invalid_api_key", "login_required", "HTTP 401 invalid_api_key")
        api.set_mode("normal")
        clear_input(s, pane)
        api.stop()
        s.type(pane, "are you there?", enter=True)
        scr = s.wait(pane, lambda x: "Reconnecting" in x or "etrying" in x or
                     ("■" in x and idle(x)), 60, quiet=True)
        time.sleep(2)
        scr = s.screen(pane)
        s.shot(pane, "connection_refused", shown_state(scr, "connection_lost"),
               "stand-in stopped: connection refused on 127.0.0.1", retry_after=retry_secs(scr))
        for secs in (20, 120):
            scr = s.wait(pane, idle, secs, quiet=True)
            time.sleep(1)
            scr = s.screen(pane)
            if idle(scr):
                s.shot(pane, "connection_refused_final", "connection_lost",
                       "connection refused until Codex gave up")
                break
            s.shot(pane, f"connection_refused_later_{secs}s", shown_state(scr, "connection_lost"),
                   f"stand-in stopped (connection refused), about {secs} s more",
                   retry_after=retry_secs(scr))
        interrupt(s, pane)
    finally:
        api.stop()
        s.kill_all()


def scene_refused(c: Codex) -> None:
    """Connection refused (stand-in stopped) while idle in a running session."""
    s, api, pane, _cwd, _hooks_dir, _log = start_seeded(c, "proj", hooks=False)
    try:
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 90)
        api.stop()
        s.type(pane, "are you there?", enter=True)
        time.sleep(8)
        scr = s.screen(pane)
        s.shot(pane, "connection_refused_8s", shown_state(scr, "connection_lost"),
               "stand-in stopped: connection refused on 127.0.0.1, 8 s in",
               retry_after=retry_secs(scr))
        for secs in (30, 120):
            scr = s.wait(pane, idle, secs, quiet=True)
            time.sleep(1)
            scr = s.screen(pane)
            if idle(scr):
                s.shot(pane, "connection_refused_final", "connection_lost",
                       "connection refused until Codex gave up")
                break
            s.shot(pane, f"connection_refused_later_{secs}s", shown_state(scr, "connection_lost"),
                   f"stand-in stopped (connection refused), about {secs} s more",
                   retry_after=retry_secs(scr))
    finally:
        api.stop()
        s.kill_all()


def scene_exits(c: Codex) -> None:
    """/exit, Ctrl-C, Ctrl-D, resume variants, kill -9, session files, hook payloads."""
    s, api, pane, cwd, hooks_dir, _log = start_seeded(c, "my proj_v1.2", hooks=True)
    try:
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 90)
        s.type(pane, "delete the scratch file [[tool]]", enter=True)
        s.wait(pane, "Would you like to run the following command?", 60)
        s.keys(pane, "Escape")
        time.sleep(2)
        s.wait(pane, idle, 20, quiet=True)
        clear_input(s, pane)
        # /exit
        s.type(pane, "/exit")
        time.sleep(0.8)
        s.keys(pane, "Enter")
        scr = s.wait(pane, lambda x: x.rstrip().endswith("$"), 30)
        time.sleep(0.5)
        s.shot(pane, "after_exit_shell", "crashed", "/exit; codex was started from bash",
               notes="clean exit (status 0). FORMAT labels a shell prompt where the agent was "
                     "'crashed'. The resume hint is printed.")
        m = re.search(r"codex resume ([0-9a-f-]{36})", scr)
        sid = m.group(1) if m else None
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, has_exit, 10)
        FACTS["exit_status_/exit"] = last_exit(scr)
        FACTS["session_id"] = sid
        FACTS["cwd"] = str(cwd)
        FACTS["exit_text"] = scr.strip()[-700:]
        rollouts = sorted((s.home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
        FACTS["rollouts"] = [str(p.relative_to(s.home)) for p in rollouts]
        for p in rollouts:
            first = json.loads(p.read_text().splitlines()[0])
            FACTS.setdefault("rollout_meta", []).append(
                {"file": p.name, "type": first.get("type"),
                 "id": first.get("payload", {}).get("id"),
                 "cwd": first.get("payload", {}).get("cwd")})
        if rollouts:
            copy_session_sample(s.home, str(rollouts[-1].relative_to(s.home)), "codex",
                                max_lines=12, scrub=shorten_json_line)
        if (s.home / ".codex" / "session_index.jsonl").exists():
            copy_session_sample(s.home, ".codex/session_index.jsonl", "codex", max_lines=3)
        payloads = sorted(hooks_dir.glob("*.json"))
        FACTS["hook_events_seen"] = [p.stem.split("-", 1)[1] for p in payloads]
        dst = capkit.FIXTURES / "sessions" / "codex" / "hook-payloads"
        seen: set[str] = set()
        for p in payloads:
            ev = p.stem.split("-", 1)[1]
            if ev not in seen:
                seen.add(ev)
                dst.mkdir(parents=True, exist_ok=True)
                text = p.read_text().replace(str(s.home) + "/", "/home/user/")
                (dst / f"{ev}.json").write_text(text)
        # resume by id in the same cwd
        s.type(pane, f"clear; '{c.bin}' resume {sid}", enter=True)
        scr = s.wait(pane, lambda x: "hello there" in x and idle(x), 40, quiet=True)
        time.sleep(1)
        FACTS["resume_same_cwd_restores"] = "hello there" in scr
        s.shot(pane, "resumed_by_id", "idle", "`codex resume <id>` in the same cwd")
        s.keys(pane, "C-c")
        time.sleep(1)
        scr = s.screen(pane)
        if not scr.rstrip().endswith("$"):
            s.shot(pane, "ctrl_c_once", "idle", "one Ctrl-C at an empty composer")
            s.keys(pane, "C-c")
        scr = s.wait(pane, lambda x: x.rstrip().endswith("$"), 15, quiet=True)
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, has_exit, 10, quiet=True)
        FACTS["exit_status_ctrl_c"] = last_exit(scr)
        FACTS["ctrl_c_exit_text"] = scr.strip()[-500:]
        # --last, then Ctrl-D
        s.type(pane, f"clear; '{c.bin}' resume --last", enter=True)
        scr = s.wait(pane, lambda x: "hello there" in x and idle(x), 40, quiet=True)
        FACTS["resume_last_restores"] = "hello there" in scr
        s.keys(pane, "C-d")
        time.sleep(1.5)
        scr = s.screen(pane)
        if not scr.rstrip().endswith("$"):
            FACTS["ctrl_d_once"] = scr.strip()[-300:]
            s.keys(pane, "C-d")
            time.sleep(1.5)
            scr = s.screen(pane)
        if scr.rstrip().endswith("$"):
            s.type(pane, "echo exit=$?", enter=True)
            scr = s.wait(pane, has_exit, 10, quiet=True)
            FACTS["exit_status_ctrl_d"] = last_exit(scr)
        else:
            FACTS["exit_status_ctrl_d"] = "Ctrl-D did not exit"
            s.keys(pane, "C-c")
            time.sleep(0.5)
            s.keys(pane, "C-c")
            s.wait(pane, lambda x: x.rstrip().endswith("$"), 15, quiet=True)
        # unknown id
        bogus = str(uuid.uuid4())
        s.type(pane, f"clear; '{c.bin}' resume {bogus}; echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: has_exit(x) or idle(x), 40, quiet=True)
        time.sleep(1.5)
        scr = s.screen(pane)
        FACTS["resume_unknown_id"] = scr.strip()[-700:]
        if not has_exit(scr):
            s.shot(pane, "resume_unknown_id", "idle" if idle(scr) else "unknown",
                   "`codex resume <unknown uuid>`")
            s.keys(pane, "C-c")
            time.sleep(0.5)
            s.keys(pane, "C-c")
            s.wait(pane, has_exit, 15, quiet=True)
        # another cwd
        other = work_dir(s, "other")
        s.type(pane, f"clear; cd '{other}'; '{c.bin}' resume {sid}; echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: has_exit(x) or ("hello there" in x and idle(x)) or
                     "Trust this folder" in x or "enter" in x.lower(), 40, quiet=True)
        time.sleep(2)
        scr = s.screen(pane)
        FACTS["resume_other_cwd"] = scr.strip()[-900:]
        if not has_exit(scr):
            s.shot(pane, "resume_other_cwd", "idle" if idle(scr) else "picker",
                   "`codex resume <id>` from a different cwd")
            for key in ("Escape", "C-c", "C-c"):
                s.keys(pane, key)
                time.sleep(0.8)
            s.wait(pane, has_exit, 15, quiet=True)
        s.type(pane, f"clear; '{c.bin}' resume --last; echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: has_exit(x) or idle(x) or "Trust" in x, 40, quiet=True)
        time.sleep(2)
        FACTS["resume_last_other_cwd"] = s.screen(pane).strip()[-900:]
        for key in ("Escape", "C-c", "C-c"):
            s.keys(pane, key)
            time.sleep(0.8)
        s.wait(pane, has_exit, 15, quiet=True)
        # picker
        s.type(pane, f"clear; cd '{cwd}'; '{c.bin}' resume; echo exit=$?", enter=True)
        time.sleep(5)
        s.shot(pane, "resume_session_picker", "picker", "`codex resume` with no id")
        s.keys(pane, "Escape")
        scr = s.wait(pane, has_exit, 15, quiet=True)
        FACTS["resume_picker_esc"] = last_exit(scr) or scr.strip()[-300:]
        if not has_exit(scr):  # Esc in the picker starts a NEW session; quit it
            time.sleep(3)
            for key in ("C-c", "C-c"):
                s.keys(pane, key)
                time.sleep(1.5)
            s.wait(pane, has_exit, 20, quiet=True)
        # kill -9 in the shell
        s.type(pane, f"clear; '{c.bin}' resume --last", enter=True)
        s.wait(pane, idle, 40)
        victim = s.agent_pid(pane, ("codex",))
        FACTS["kill9_victim"] = victim
        if victim:
            os.kill(victim, 9)
        scr = s.wait(pane, lambda x: x.rstrip().endswith("$"), 20, quiet=True)
        time.sleep(1)
        s.shot(pane, "killed_shell_prompt", "crashed",
               "kill -9 of the native codex process (the node launcher exits too)")
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, has_exit, 10, quiet=True)
        FACTS["exit_status_kill9_in_shell"] = last_exit(scr)
        pane2 = s.pane(f"'{c.bin}' resume --last", cwd, "direct")
        s.wait(pane2, idle, 40)
        victim = s.agent_pid(pane2, ("codex",))
        if victim:
            os.kill(victim, 9)
        st = s.dead_status(pane2)
        s.wait(pane2, "Pane is dead", 20, quiet=True)
        s.shot(pane2, "killed_pane_dead", "crashed",
               "kill -9 of native codex running as the pane command",
               notes=f"pane_dead_status={st}")
        FACTS["exit_status_kill9_pane"] = st
    finally:
        api.stop()
        s.kill_all()


def start_seeded(c: Codex, dirname: str, hooks: bool = False, width: int = 120,
                 height: int = 40) -> tuple[Session, Standin, str, Path, Path, Path]:
    """auth.json + trusted project (+ trusted hooks); codex started from bash; idle."""
    s = c.session(width, height)
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_openai_responses.py", log)
    cwd = work_dir(s, dirname)
    c.seed(s, api.url, [cwd])
    hooks_dir = s.home / "hook-payloads"
    hooks_dir.mkdir()
    if hooks:
        write_hooks(s, hooks_dir)
    pane = s.shell_pane(cwd, "seeded", width=width, height=height)
    s.wait(pane, "$ ", 10)
    s.type(pane, f"'{c.bin}'", enter=True)
    if hooks:
        s.wait(pane, "Hooks need review", 90)
        time.sleep(1)
        s.keys(pane, "Down")
        time.sleep(0.4)
        s.keys(pane, "Enter")
    s.wait(pane, lambda x: idle(x) and "Hooks need review" not in x, 90)
    wait_daemon(s)
    return s, api, pane, cwd, hooks_dir, log


def wait_daemon(s: Session, timeout: float = 40) -> bool:
    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in psutil.process_iter(["cmdline", "environ"]):
            try:
                if "app-server" in " ".join(p.info["cmdline"] or []) and \
                        (p.info.get("environ") or {}).get("HOME") == str(s.home):
                    time.sleep(2)
                    return True
            except psutil.Error:
                continue
        time.sleep(1)
    return False


def write_hooks(s: Session, hooks_dir: Path) -> None:
    cmd = f"cat > {hooks_dir}/$(date +%s%N)-{{ev}}.json"
    hooks = {"hooks": {ev: [{"hooks": [{"type": "command", "command": cmd.format(ev=ev),
                                        "timeout": 10}]}]
                       for ev in ("SessionStart", "UserPromptSubmit", "PreToolUse",
                                  "PermissionRequest", "PostToolUse", "Stop")}}
    (s.home / ".codex" / "hooks.json").write_text(json.dumps(hooks, indent=2))
    with open(s.home / ".codex" / "config.toml", "a") as fh:
        fh.write("\n[features]\ncodex_hooks = true\n")


def save_codex_tree(s: Session, pane: str, version: str) -> None:
    """Pane tree plus the app-server daemon processes (which are not the pane's children)."""
    import psutil

    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        if any("app-server" in " ".join(p.info["cmdline"] or [])
               for p in psutil.process_iter(["cmdline"])):
            break
        time.sleep(1)
    rows = capkit.process_tree(s.tmux.pane_pid(pane))  # type: ignore[union-attr]
    seen = {r["pid"] for r in rows}
    for proc in psutil.process_iter(["pid", "ppid", "name", "exe", "cmdline", "environ"]):
        info = proc.info
        if info["pid"] in seen or (info.get("environ") or {}).get("HOME") != str(s.home):
            continue
        rows.append({"pid": info["pid"], "ppid": info["ppid"], "name": info["name"],
                     "exe": info["exe"], "cmdline": info["cmdline"], "daemon": True})
    for row in rows:
        row["cmdline"] = [str(a).replace(str(s.home) + "/", "/home/user/")
                          for a in cast(list[str], row["cmdline"])]
        row["exe"] = str(row["exe"]).replace(str(s.home) + "/", "/home/user/")
    capkit.save_processes("codex", rows,
                          f"codex {version} started from bash in a tmux pane as `codex` (npm bin "
                          "symlink to bin/codex.js, run by node). node execs/spawns the native "
                          "musl binary; codex-code-mode-host appears after the first turn. Rows "
                          "with daemon=true are the app-server daemon (copied under "
                          "~/.codex/packages/app-server-daemon/releases/) found by HOME; they "
                          "outlive the TUI and get reparented to PID 1.")


def shorten_json_line(line: str) -> str:
    try:
        obj = json.loads(line)
    except ValueError:
        return line

    def cut(v: object) -> object:
        if isinstance(v, str) and len(v) > 160:
            return v[:160] + "…[trimmed]"
        if isinstance(v, list):
            return [cut(x) for x in v[:6]]
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        return v

    return json.dumps(cut(obj), ensure_ascii=False) + "\n"


def scene_upgrade(c: Codex) -> None:
    """~/.codex/version.json naming a newer latest_version -> the update popup."""
    s = c.session()
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_openai_responses.py", log)
    try:
        cwd = work_dir(s, "proj")
        c.seed(s, api.url, [cwd])
        now = dt.datetime.now(dt.UTC)
        (s.home / ".codex" / "version.json").write_text(json.dumps({
            "latest_version": "0.999.0", "last_checked_at": now.isoformat(),
            "dismissed_version": None}))
        pane = s.pane(str(c.bin), cwd, "upg")
        # The popup comes after the app-server daemon is up (first start: ~15-20 s).
        scr = s.wait(pane, "Update available", 90, quiet=True)
        time.sleep(1.5)
        scr = s.screen(pane)
        s.shot(pane, "update_available", "upgrade_prompt" if "0.999.0" in scr and not idle(scr)
               else "idle", "version.json says latest_version 0.999.0",
               evidence="0.999.0" if "0.999.0" in scr else None)
        FACTS["upgrade_screen"] = scr.strip()[-1200:]
        if "0.999.0" in scr and not idle(scr):
            s.keys(pane, "Escape")
            time.sleep(2)
            scr = s.screen(pane)
            FACTS["upgrade_after_skip"] = scr.strip()[-600:]
            s.shot(pane, "after_update_skip", "idle" if idle(scr) else "unknown",
                   "after Esc (skip) on the update popup")
    finally:
        api.stop()
        s.kill_all()


def scene_small(c: Codex) -> None:
    s = c.session(width=80, height=24)
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_openai_responses.py", log)
    try:
        cwd = work_dir(s, "proj")
        c.seed(s, api.url, [cwd])
        pane = s.pane(str(c.bin), cwd, "small", width=80, height=24)
        s.wait(pane, idle, 40)
        time.sleep(1.5)
        s.shot(pane, "welcome_80x24", "idle", "80x24 pane")
        s.type(pane, "please summarise the repository layout and the build steps in detail")
        time.sleep(1)
        s.shot(pane, "draft_wrapped_80x24", "draft", "long unsent text in 80 cols")
        clear_input(s, pane)
        s.type(pane, "delete it [[tool]]", enter=True)
        s.wait(pane, "Would you like to run", 40)
        time.sleep(1)
        s.shot(pane, "approval_80x24", "question", "approval menu in 80x24")
        s.keys(pane, "Escape")
        time.sleep(2)
        clear_input(s, pane)
        t0 = time.time()
        s.type(pane, "go [[usage_limit]]", enter=True)
        s.wait(pane, "usage limit", 60)
        time.sleep(2)
        scr = s.screen(pane)
        reset = dt.datetime.fromtimestamp(-(-int(t0 + 7200) // 60) * 60, dt.UTC)
        if "Keep current model" in scr:
            s.keys(pane, "Escape")
            time.sleep(1.5)
        s.shot(pane, "usage_limit_80x24", "rate_limit", "usage_limit_reached in 80x24",
               reset_at=reset.isoformat(), evidence="hit your usage limit")
        clear_input(s, pane)
        s.type(pane, "continue [[429]]", enter=True)
        s.wait(pane, lambda x: "Reconnecting" in x or "etrying" in x, 60, quiet=True)
        time.sleep(1)
        scr = s.screen(pane)
        s.shot(pane, "429_retrying_80x24", shown_state(scr, "rate_limit"),
               "429 retry-after 20 in 80x24", retry_after=retry_secs(scr))
        interrupt(s, pane)
        kill_daemon(s, pane, "_80x24")
    finally:
        api.stop()
        s.kill_all()


def kill_daemon(s: Session, pane: str, sfx: str) -> None:
    """SIGKILL the app-server daemon under the TUI and capture what the TUI shows."""
    import psutil

    victims = [p for p in psutil.process_iter(["pid", "cmdline", "environ"])
               if "app-server" in " ".join(p.info["cmdline"] or [])
               and (p.info.get("environ") or {}).get("HOME") == str(s.home)]
    FACTS["daemon_pids_killed"] = [p.pid for p in victims]
    for p in victims:
        p.kill()
    s.wait(pane, lambda x: "econnect" in x or "server" in x.lower(), 30,
                 quiet=True)
    time.sleep(2)
    s.shot(pane, f"daemon_killed{sfx}", "connection_lost",
           "SIGKILL of the codex app-server daemon processes while the TUI is idle")
    FACTS["daemon_killed_screen"] = s.screen(pane).strip()[-600:]


def scene_headless(c: Codex) -> None:
    s = c.session()
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_openai_responses.py", log)
    results: dict[str, Any] = {}
    try:
        cwd = work_dir(s, "proj", git=False)
        c.seed(s, api.url, [])
        env = {**s.env}
        base = [str(c.bin), "exec", "--sandbox", "read-only", "--skip-git-repo-check",
                "-m", "gpt-5"]
        runs: dict[str, tuple[list[str], str | None, str]] = {
            "arg_ok": ([*base, "is the build green?"], None, "normal"),
            "stdin_ok": (base, "is the build green?", "normal"),
            "stdin_dash": ([*base, "-"], "is the build green?", "normal"),
            "json_ok": ([*base, "--json", "status?"], None, "normal"),
            "no_git_check": ([str(c.bin), "exec", "--sandbox", "read-only", "status?"], None,
                             "normal"),
            "429": ([*base, "status?"], None, "429"),
            "usage_limit": ([*base, "status?"], None, "usage_limit"),
            "quota": ([*base, "status?"], None, "quota"),
            "401": ([*base, "status?"], None, "401"),
        }
        for name, (cmd, stdin, mode) in runs.items():
            api.set_mode(mode)
            t0 = time.time()
            try:
                p = subprocess.run(cmd, input=stdin if stdin is not None else "",
                                   capture_output=True, text=True, env=env, cwd=cwd,
                                   timeout=360)
                results[name] = {"cmd": " ".join(cmd[1:]), "stdin": stdin, "rc": p.returncode,
                                 "stdout": p.stdout[-1500:], "stderr": p.stderr[-2500:],
                                 "seconds": round(time.time() - t0, 1)}
            except subprocess.TimeoutExpired as e:
                results[name] = {"cmd": " ".join(cmd[1:]), "timeout": 360,
                                 "stderr": (e.stderr or b"")[-1500:].decode(errors="replace")
                                 if isinstance(e.stderr, bytes) else str(e.stderr)[-1500:]}
            print(f"  headless {name}: {results[name].get('rc')}", flush=True)
        FACTS["headless"] = results
        api.stop()
        try:
            p = subprocess.run([*base, "status?"], input="", capture_output=True, text=True,
                               env=env, cwd=cwd, timeout=90)
            results["refused"] = {"rc": p.returncode, "stdout": p.stdout[-800:],
                                  "stderr": p.stderr[-1500:]}
        except subprocess.TimeoutExpired as e:
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
            results["refused"] = {"timeout": 90, "stderr": (err or "")[-1500:],
                                  "note": "still running after 90 s (killed)"}
    finally:
        api.stop()
        s.kill_all()


def scene_help(c: Codex) -> None:
    s = c.session()
    try:
        b = str(c.bin)
        text = run_help([[b, "--version"], [b, "--help"], [b, "resume", "--help"],
                         [b, "exec", "--help"], [b, "fork", "--help"], [b, "login", "--help"],
                         [b, "exec", "resume", "--help"], [b, "exec", "fork", "--help"]],
                        s.env, s.home)
        copy_help("codex", text.replace(str(s.home) + "/", "/home/user/"))
    finally:
        s.kill_all()


SCENES: dict[str, Callable[[Codex], None]] = {
    "onboarding": scene_onboarding, "main": scene_main, "limits": scene_limits,
    "exits": scene_exits, "refused": scene_refused, "upgrade": scene_upgrade,
    "small": scene_small, "headless": scene_headless, "help": scene_help,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(SCENES))
    args = ap.parse_args()
    c = Codex()
    print(f"codex {c.version} from {c.bin}", flush=True)
    facts_path = REALCLI / "codex-facts.json"
    if facts_path.exists():
        FACTS.update(json.loads(facts_path.read_text()))
    FACTS["version"] = c.version
    for name in args.only.split(","):
        print(f"scene {name}", flush=True)
        try:
            SCENES[name](c)
            FACTS.setdefault("errors", {}).pop(name, None)
        except Exception:
            traceback.print_exc()
            FACTS.setdefault("errors", {})[name] = traceback.format_exc()[-2000:]
        merged = json.loads(facts_path.read_text()) if facts_path.exists() else {}
        merged.update(FACTS)  # other runs (scenes in parallel) may have written meanwhile
        write_json(facts_path, merged)
    print(json.dumps(FACTS, indent=2, default=str)[:6000])


if __name__ == "__main__":
    main()
