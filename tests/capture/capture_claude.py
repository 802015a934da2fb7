"""Capture real Claude Code screens, process tree, session files and hook payloads.

Needs tmux, node/npm and the CLI installed under /tmp/realcli (override with PITCREW_REALCLI)::

    npm install --prefix /tmp/realcli/claude @anthropic-ai/claude-code
    npm install --prefix /tmp/realcli/claude-latest @anthropic-ai/claude-code@latest   # optional

Run (from the repo root, with the project venv, which has psutil)::

    .venv/bin/python tests/capture/capture_claude.py                 # everything, 2.1.x default
    .venv/bin/python tests/capture/capture_claude.py --only main,oauth
    .venv/bin/python tests/capture/capture_claude.py --dir claude-latest \
        --suffix _v2_1_332 --only first_run,main,oauth

Scenes: first_run, main, oauth, nologin, small, exits, headless, help (see SCENES). Each scene
starts tests/capture/standin_anthropic.py on 127.0.0.1 and a fresh throwaway HOME, so nothing
touches the developer's own ~/.claude. Fixtures go to tests/fixtures/screens/claude/ (named
``<state>__<slug>``), session samples to tests/fixtures/sessions/claude/, the process tree to
tests/fixtures/processes/claude.json, help text to tests/fixtures/cli-help/claude.txt. Facts the
run prints (exit statuses, resume behaviour, headless output) are also written to
/tmp/realcli/claude-facts.json for the notes. All processes and the tmux server it started are
killed at the end.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capkit
from capsession import (
    REALCLI,
    Session,
    Standin,
    copy_help,
    copy_session_sample,
    run_help,
    save_process_tree,
    write_json,
)

FACTS: dict[str, Any] = {}
KEY = "sk-ant-test-0000"
OAUTH = "sk-ant-oat01-test-0000"


class Claude:
    def __init__(self, cli_dir: str, suffix: str) -> None:
        self.bin = REALCLI / cli_dir / "node_modules" / ".bin" / "claude"
        self.suffix = suffix
        out = subprocess.run([str(self.bin), "--version"], capture_output=True, text=True,
                             env={**os.environ, "DISABLE_AUTOUPDATER": "1"}).stdout
        self.version = out.split()[0] if out else "unknown"

    def session(self, tag: str, seed: bool = True, trust: list[Path] | None = None,
                width: int = 120, height: int = 40) -> Session:
        s = Session("claude", self.version, "capture_claude.py", width=width, height=height)
        if seed:
            cfg: dict[str, object] = {"hasCompletedOnboarding": True, "theme": "dark",
                                      "lastOnboardingVersion": self.version}
            if trust:
                cfg["projects"] = {str(p): {"hasTrustDialogAccepted": True} for p in trust}
                cfg["customApiKeyResponses"] = {"approved": [KEY[-20:]], "rejected": []}
            (s.home / ".claude.json").write_text(json.dumps(cfg, indent=2))
        return s


def idle(screen: str) -> bool:
    """Input box waiting: no 'esc to interrupt', and the idle footer (2.1.197: '? for
    shortcuts'; 2.1.332 in auto mode: '⏵⏵ auto mode on (shift+tab to cycle)')."""
    return "esc to interrupt" not in screen and (
        "? for shortcuts" in screen or "shift+tab to cycle" in screen)


def retry_label(screen: str) -> str:
    """State of a screen whose spinner line says 'Retrying in …', judged from that line only.

    Claude's line is the generic 'API error · Retrying in Ns · attempt n/10' for 429, 401, 5xx
    and refused connections alike; only late attempts put '429 <API message>' in it.
    """
    line = next((ln for ln in screen.splitlines()[::-1] if "Retrying in" in ln), "")
    if "429" in line or "rate limit" in line.lower():
        return "rate_limit"
    if "401" in line or "x-api-key" in line or "/login" in line:
        return "login_required"
    return "connection_lost"


GENERIC = ("Claude shows only the generic 'API error · Retrying in Ns · attempt n/10' line, so "
           "the label follows the screen (connection_lost, 'retrying'), not the cause")


def clear_input(s: Session, pane: str) -> None:
    for _ in range(4):
        s.keys(pane, "C-u")
        time.sleep(0.15)


def interrupt(s: Session, pane: str) -> None:
    s.keys(pane, "Escape")
    time.sleep(1.0)
    s.wait(pane, lambda x: "esc to interrupt" not in x, 15, quiet=True)
    clear_input(s, pane)
    time.sleep(0.5)


def work_dir(s: Session, name: str) -> Path:
    d = s.home.parent / f"{s.home.name}-work" / name
    d.mkdir(parents=True, exist_ok=True)
    return d


# ------------------------------------------------------------------------------------------
# scenes


def scene_first_run(c: Claude) -> None:
    """Fresh HOME, no onboarding done: the connectivity preflight fails offline (exit 1)."""
    s = c.session("first", seed=False)
    try:
        cwd = work_dir(s, "proj")
        pane = s.pane(str(c.bin), cwd, "first")
        s.wait(pane, "Unable to connect to Anthropic services", 40)
        status = s.dead_status(pane)
        s.wait(pane, "Pane is dead", 20, quiet=True)
        s.shot(pane, f"first_run_preflight_offline{c.suffix}", "crashed",
               "fresh HOME, onboarding connectivity preflight with no network",
               evidence="Unable to connect to Anthropic services",
               notes=f"Claude exited with status {status}; tmux remain-on-exit shows "
                     "'Pane is dead'. "
                     "It is a connection error, but the CLI is gone, so crashed.")
        FACTS["first_run_preflight_exit"] = status
    finally:
        s.kill_all()


def scene_main(c: Claude) -> None:
    """Seeded onboarding; API key via env; most states in one conversation."""
    s = c.session("main", seed=True)
    sfx = c.suffix
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_anthropic.py", log)
    write_hooks(s)
    try:
        cwd = work_dir(s, "my proj_v1.2")
        env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": KEY}
        pane = s.shell_pane(cwd, "main", env)
        s.wait(pane, "$ ", 10)
        s.type(pane, f"'{c.bin}'", enter=True)
        scr = s.wait(pane, "trust this folder", 30)
        time.sleep(0.5)
        scr = s.screen(pane)
        s.shot(pane, f"trust_folder{sfx}", "picker", "first start in a new folder",
               evidence="Yes, I trust this folder",
               notes="2.1.332 lists '❯ No, exit' first (the default) and has no numbers"
               if "❯ No, exit" in scr else None)
        if "❯ No, exit" in scr:
            s.keys(pane, "Down")
            time.sleep(0.4)
        s.keys(pane, "Enter")
        scr = s.wait(pane, lambda x: "Detected a custom API key" in x or idle(x), 30)
        if "Detected a custom API key" in scr:
            time.sleep(0.5)
            s.shot(pane, f"custom_api_key_prompt{sfx}", "login_required",
                   "ANTHROPIC_API_KEY set in the environment, first use",
                   evidence="Detected a custom API key",
                   notes="asks whether to use the env API key; default is 'No (recommended)'")
            s.keys(pane, "Up")
            time.sleep(0.3)
            s.keys(pane, "Enter")
        scr = s.wait(pane, idle, 30)
        time.sleep(1.5)
        s.shot(pane, f"welcome{sfx}", "idle", "just started, empty prompt",
               notes="input box '❯ ' between two ─ rules; footer '? for shortcuts'. No dim "
                     "placeholder text in this version (see .ansi)")
        agent = s.agent_pid(pane, ("claude", "claude.exe"))
        if agent and not sfx:
            save_process_tree("claude", s.tmux.pane_pid(pane),  # type: ignore[union-attr]
                              f"claude {c.version} started from bash in a tmux pane "
                              f"(`'{c.bin}'`); the npm bin is a native executable, no node "
                              "process", s.home)
        s.type(pane, "fix the failing test in utils.py")
        time.sleep(1)
        s.shot(pane, f"single_line{sfx}", "draft", "typed, not sent",
               evidence="fix the failing test in utils.py")
        clear_input(s, pane)
        s.type(pane, "first line of a longer request\\")
        s.keys(pane, "Enter")
        s.type(pane, "second line: also update the changelog")
        time.sleep(1)
        s.shot(pane, f"multi_line{sfx}", "draft", "typed with backslash+Enter, not sent")
        clear_input(s, pane)
        clear_input(s, pane)
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 30)
        time.sleep(1)
        s.shot(pane, f"after_reply{sfx}", "idle", "stand-in streamed a normal reply")
        # busy: slow stream
        s.type(pane, "refactor the parser [[slow]]", enter=True)
        s.wait(pane, "esc to interrupt", 20)
        time.sleep(4)
        s.shot(pane, f"streaming{sfx}", "busy", "stand-in streams text slowly",
               evidence="esc to interrupt")
        s.keys(pane, "Escape")
        scr = s.wait(pane, "Interrupted", 15)
        time.sleep(1)
        s.shot(pane, f"after_interrupt_prompt_restored{sfx}", "draft",
               "Esc during a reply: Claude puts the interrupted prompt back in the input box",
               notes="'Interrupted · What should Claude do instead?' and the old prompt is back "
                     "in the box (unsent text)")
        clear_input(s, pane)
        time.sleep(0.5)
        s.shot(pane, f"after_interrupt{sfx}", "idle", "after Esc + clearing the input box",
               evidence="What should Claude do instead?")
        # stalled stream
        s.type(pane, "look at the logs [[stall]]", enter=True)
        s.wait(pane, "esc to interrupt", 20)
        time.sleep(20)
        s.shot(pane, f"stalled_stream_20s{sfx}", "busy",
               "stand-in sent message_start and then nothing (stalled stream), 20 s in",
               notes="nothing on screen tells a stall from thinking")
        time.sleep(70)
        s.shot(pane, f"stalled_stream_90s{sfx}", "busy", "same stalled stream, 90 s in")
        interrupt(s, pane)
        # permission menu
        s.type(pane, "delete the scratch file [[tool]]", enter=True)
        s.wait(pane, "Do you want to proceed?", 30)
        time.sleep(1)
        s.shot(pane, f"permission_bash{sfx}", "question", "stand-in returned a Bash tool_use",
               evidence="Do you want to proceed?")
        s.keys(pane, "Escape")
        time.sleep(2)
        clear_input(s, pane)
        s.wait(pane, idle, 15, quiet=True)
        # AskUserQuestion
        s.type(pane, "set up caching [[question]]", enter=True)
        s.wait(pane, "Which database should the cache use?", 30)
        time.sleep(1)
        s.shot(pane, f"ask_user_question{sfx}", "question",
               "stand-in returned an AskUserQuestion tool_use",
               evidence="Which database should the cache use?")
        s.keys(pane, "Escape")
        time.sleep(2)
        clear_input(s, pane)
        s.wait(pane, idle, 15, quiet=True)
        # hard negatives
        s.type(pane, "write the retry helper [[code429]]", enter=True)
        s.wait(pane, lambda x: "back off" in x and idle(x), 40)
        time.sleep(1)
        s.shot(pane, f"code_mentions_429{sfx}", "idle",
               "stand-in reply contains code with '429 Too Many Requests' and 'rate limit'",
               hard_negative=True)
        s.type(pane, "write it again [[code429_stall]]", enter=True)
        s.wait(pane, "rate limit exceeded", 40)
        time.sleep(3)
        s.shot(pane, f"code_mentions_429_streaming{sfx}", "busy",
               "stand-in streams code mentioning 429/rate limit, then stalls", hard_negative=True)
        interrupt(s, pane)
        # 429 with retry-after: 20
        s.type(pane, "continue [[429]]", enter=True)
        scr = s.wait(pane, "Retrying in", 40)
        time.sleep(0.6)
        scr = s.screen(pane)
        m = re.search(r"Retrying in (\d+)s", scr)
        s.shot(pane, f"429_retrying{sfx}", retry_label(scr),
               "stand-in answered HTTP 429 rate_limit_error with retry-after: 20",
               retry_after=int(m.group(1)) if m else None, evidence="Retrying in",
               notes="cause: HTTP 429. " + GENERIC)
        time.sleep(22)
        scr = s.screen(pane)
        m = re.search(r"Retrying in (\d+)s", scr)
        s.shot(pane, f"429_retrying_attempt2{sfx}", retry_label(scr),
               "same 429 (retry-after: 20), second attempt",
               retry_after=int(m.group(1)) if m else None, notes="cause: HTTP 429. " + GENERIC)
        interrupt(s, pane)
    finally:
        api.stop()
        s.kill_all()


def scene_exits(c: Claude) -> None:
    """/exit, Ctrl-C, Ctrl-D, resume variants, kill -9, session files, hook payloads."""
    s, api, pane, cwd, hooks_dir, env, _log = start_seeded(c, "my proj_v1.2")
    sfx = c.suffix
    try:
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 60)
        s.type(pane, "delete the scratch file [[tool]]", enter=True)
        s.wait(pane, "Do you want to proceed?", 30)
        s.keys(pane, "Escape")
        time.sleep(2)
        clear_input(s, pane)
        s.wait(pane, idle, 15, quiet=True)
        # /exit in a shell
        s.type(pane, "/exit")
        time.sleep(0.8)
        s.keys(pane, "Enter")
        scr = s.wait(pane, lambda x: x.rstrip().endswith("$"), 30)
        time.sleep(0.5)
        s.shot(pane, f"after_exit_shell{sfx}", "crashed",
               "/exit typed; claude was started from bash, so the shell prompt is back",
               notes="clean exit (status 0), not a crash: FORMAT has no 'exited' state and "
                     "labels 'a shell prompt where the agent was' crashed. Resume hint printed.")
        m = re.search(r"claude --resume ([0-9a-f-]{36})", scr)
        sid = m.group(1) if m else None
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)), 10)
        FACTS["exit_status_/exit"] = re.findall(r"exit=(\d+)", scr)[-1]
        FACTS["session_id"] = sid
        FACTS["cwd"] = str(cwd)
        # session files
        projects = s.home / ".claude" / "projects"
        dirs = sorted(p.name for p in projects.iterdir()) if projects.exists() else []
        FACTS["project_dirs"] = dirs
        FACTS["cwd_escaped_guess"] = re.sub(r"[^a-zA-Z0-9]", "-", str(cwd))
        if dirs and sid and not sfx:
            rel = f".claude/projects/{dirs[0]}/{sid}.jsonl"
            copy_session_sample(s.home, rel, "claude", max_lines=8)
            FACTS["session_rel"] = rel
        # hooks
        payloads = sorted(hooks_dir.glob("*.json"))
        FACTS["hook_events_seen"] = [p.stem.split("-", 1)[1] for p in payloads]
        if not sfx:
            dst = capkit.FIXTURES / "sessions" / "claude" / "hook-payloads"
            dst.mkdir(parents=True, exist_ok=True)
            seen: set[str] = set()
            for p in payloads:
                ev = p.stem.split("-", 1)[1]
                if ev in seen:
                    continue
                seen.add(ev)
                (dst / f"{ev}.json").write_text(
                    p.read_text().replace(str(s.home) + "/", "/home/user/"))
        # resume by id in the same cwd
        s.type(pane, "clear", enter=True)
        s.type(pane, f"'{c.bin}' --resume {sid}", enter=True)
        scr = s.wait(pane, lambda x: "hello there" in x and idle(x), 40, quiet=True)
        time.sleep(1)
        FACTS["resume_same_cwd_restores"] = "hello there" in scr
        s.shot(pane, f"resumed_by_id{sfx}", "idle", "`claude --resume <uuid>` in the same cwd")
        # Ctrl-C twice
        s.keys(pane, "C-c")
        time.sleep(0.5)
        s.screen(pane)
        s.shot(pane, f"ctrl_c_once{sfx}", "idle", "one Ctrl-C at an empty prompt",
               notes="footer asks for a second Ctrl-C to exit")
        s.keys(pane, "C-c")
        scr = s.wait(pane, lambda x: x.rstrip().endswith("$"), 15)
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)), 10)
        FACTS["exit_status_ctrl_c_x2"] = re.findall(r"exit=(\d+)", scr)[-1]
        # --continue (latest in this dir), then Ctrl-D twice
        s.type(pane, "clear", enter=True)
        s.type(pane, f"'{c.bin}' --continue", enter=True)
        scr = s.wait(pane, lambda x: "hello there" in x and idle(x), 40, quiet=True)
        FACTS["continue_restores"] = "hello there" in scr
        s.keys(pane, "C-d")
        time.sleep(0.4)
        s.keys(pane, "C-d")
        scr = s.wait(pane, lambda x: x.rstrip().endswith("$"), 15)
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)), 10)
        FACTS["exit_status_ctrl_d_x2"] = re.findall(r"exit=(\d+)", scr)[-1]
        # unknown id
        s.type(pane, "clear", enter=True)
        bogus = str(uuid.uuid4())
        s.type(pane, f"'{c.bin}' --resume {bogus}; echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)) or idle(x), 40, quiet=True)
        time.sleep(1)
        scr = s.screen(pane)
        FACTS["resume_unknown_id_screen"] = scr.strip()[-600:]
        if not re.search(r"exit=\d+\n", scr):
            s.shot(pane, f"resume_unknown_id{sfx}", "idle", "`claude --resume <unknown uuid>`")
            s.keys(pane, "C-c")
            time.sleep(0.4)
            s.keys(pane, "C-c")
            s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)), 15, quiet=True)
        # from another cwd
        other = work_dir(s, "other")
        s.type(pane, f"clear; cd '{other}'", enter=True)
        s.type(pane, f"'{c.bin}' --resume {sid}; echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)) or
                     ("hello there" in x and idle(x)) or "trust this folder" in x, 40, quiet=True)
        time.sleep(1)
        scr = s.screen(pane)
        FACTS["resume_other_cwd_screen"] = scr.strip()[-800:]
        if "trust this folder" in scr:
            s.keys(pane, "Enter")
            scr = s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)) or idle(x), 30,
                         quiet=True)
            time.sleep(1)
            scr = s.screen(pane)
            FACTS["resume_other_cwd_after_trust"] = scr.strip()[-800:]
        if not re.search(r"exit=\d+\n", scr):
            s.shot(pane, f"resume_other_cwd{sfx}", "idle" if idle(scr) else "unknown",
                   "`claude --resume <uuid>` from a different cwd")
            s.type(pane, "/exit")
            time.sleep(0.5)
            s.keys(pane, "Enter")
            s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)), 15, quiet=True)
        # picker
        s.type(pane, f"clear; cd '{cwd}'; '{c.bin}' --resume; echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: "Resume" in x or "resume" in x, 30, quiet=True)
        time.sleep(2)
        s.shot(pane, f"resume_session_picker{sfx}", "picker", "`claude --resume` with no id")
        s.keys(pane, "Escape")
        scr = s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)), 8, quiet=True)
        FACTS["resume_picker_esc"] = re.findall(r"exit=(\d+)", scr)[-1:] or scr[-300:]
        for key in ("Escape", "C-c", "C-c"):
            if re.search(r"exit=\d+\n", s.screen(pane)):
                break
            s.keys(pane, key)
            time.sleep(1.5)
        scr = s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)), 10, quiet=True)
        FACTS["resume_picker_exit_after_keys"] = re.findall(r"exit=(\d+)", scr)[-1:]
        # kill -9 inside the shell
        s.type(pane, f"clear; '{c.bin}' --continue", enter=True)
        s.wait(pane, idle, 40)
        agent = s.agent_pid(pane, ("claude", "claude.exe"))
        if agent:
            os.kill(agent, 9)
        scr = s.wait(pane, lambda x: x.rstrip().endswith("$"), 15, quiet=True)
        time.sleep(0.5)
        s.shot(pane, f"killed_shell_prompt{sfx}", "crashed",
               "kill -9 of the claude process; bash prints 'Killed' and its prompt")
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: bool(re.search(r"exit=\d+\n", x)), 10, quiet=True)
        FACTS["exit_status_kill9_in_shell"] = re.findall(r"exit=(\d+)", scr)[-1:]
        # kill -9 of a pane that runs claude directly
        pane2 = s.pane(f"'{c.bin}' --continue", cwd, "direct", env)
        s.wait(pane2, idle, 40)
        agent = s.agent_pid(pane2, ("claude", "claude.exe"))
        if agent:
            os.kill(agent, 9)
        st = s.dead_status(pane2)
        s.wait(pane2, "Pane is dead", 20, quiet=True)
        s.shot(pane2, f"killed_pane_dead{sfx}", "crashed",
               "kill -9 of claude running as the pane command (remain-on-exit on)",
               notes=f"exit {st} (tmux: pane_dead_status empty, pane_dead_signal 9); the last "
                     "Claude frame stays above 'Pane is dead (signal 9, …)'")
        FACTS["exit_status_kill9_pane"] = st
    finally:
        api.stop()
        s.kill_all()


def scene_errors(c: Claude) -> None:
    """429 until Claude gives up, 429 without headers, 500, 529, 401, connection refused."""
    s, api, pane, _cwd, _hooks_dir, _env, _log = start_seeded(c, "proj")
    sfx = c.suffix
    try:
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 60)
        s.type(pane, "continue [[429_fast]]", enter=True)
        scr = s.wait(pane, lambda x: bool(re.search(r"attempt [3-9]/10", x)), 200)
        time.sleep(0.5)
        scr = s.screen(pane)
        m = re.search(r"Retrying in (\d+)s", scr)
        s.shot(pane, f"429_retrying_late_attempt{sfx}", retry_label(scr),
               "stand-in answered 429 rate_limit_error (retry-after: 1) on every attempt",
               retry_after=int(m.group(1)) if m else None,
               notes="cause: HTTP 429; Claude's backoff ignored retry-after: 1. " + GENERIC)
        scr = s.wait(pane, lambda x: "Request rejected" in x or ("API Error" in x and idle(x)),
                     420)
        time.sleep(1)
        s.shot(pane, f"429_final{sfx}", "rate_limit",
               "stand-in answered 429 rate_limit_error on all 11 attempts",
               evidence="Request rejected (429)")
        clear_input(s, pane)
        s.type(pane, "continue [[429_bare]]", enter=True)
        s.wait(pane, "Retrying in", 40)
        time.sleep(0.5)
        scr = s.screen(pane)
        s.shot(pane, f"429_bare_retrying{sfx}", retry_label(scr),
               "stand-in answered HTTP 429 with no retry-after / reset headers",
               notes="cause: HTTP 429, backoff chosen by Claude itself. " + GENERIC)
        interrupt(s, pane)
        for code in ("500", "529"):
            s.type(pane, f"continue [[{code}]]", enter=True)
            s.wait(pane, "Retrying in", 40)
            time.sleep(0.5)
            s.shot(pane, f"{code}_retrying{sfx}", "connection_lost",
                   f"stand-in answered HTTP {code}",
                   notes="first attempts show 'API error · Retrying in Ns · attempt n/10'")
            scr = s.wait(pane, lambda x: bool(re.search(r"attempt [4-9]/10", x)) or idle(x),
                         200, quiet=True)
            if not idle(scr):
                s.shot(pane, f"{code}_retrying_late_attempt{sfx}", "connection_lost",
                       f"stand-in answered HTTP {code}, later attempt")
            scr = s.wait(pane, idle, 420, quiet=True)
            if idle(scr):
                time.sleep(1)
                s.shot(pane, f"{code}_final{sfx}", "connection_lost",
                       f"stand-in answered HTTP {code} until Claude gave up")
            interrupt(s, pane)
    finally:
        api.stop()
        s.kill_all()


def scene_errors_net(c: Claude) -> None:
    """HTTP 401 (invalid key) until Claude gives up, then connection refused."""
    s, api, pane, _cwd, _hooks_dir, _env, _log = start_seeded(c, "proj")
    sfx = c.suffix
    try:
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 60)
        # invalid key
        api.set_mode("401")
        s.type(pane, "hello again", enter=True)
        s.wait(pane, "Retrying in", 60)
        time.sleep(0.5)
        s.shot(pane, f"401_retrying{sfx}", retry_label(s.screen(pane)),
               "stand-in answered HTTP 401 authentication_error 'invalid x-api-key'",
               notes="cause: HTTP 401; Claude retries a 401 too (up to 10 attempts). " + GENERIC)
        s.wait(pane, lambda x: ("Invalid API key" in x or "/login" in x) and idle(x), 420)
        time.sleep(1)
        s.shot(pane, f"invalid_api_key{sfx}", "login_required",
               "stand-in answered HTTP 401 authentication_error 'invalid x-api-key'")
        api.set_mode("normal")
        clear_input(s, pane)
        # connection refused: stop the stand-in (port stays closed)
        api.stop()
        s.type(pane, "are you there?", enter=True)
        s.wait(pane, "Retrying in", 60)
        time.sleep(0.5)
        s.shot(pane, f"connection_refused_retrying{sfx}", "connection_lost",
               "stand-in stopped: connection refused on 127.0.0.1")
        scr = s.wait(pane, idle, 420, quiet=True)
        if idle(scr):
            time.sleep(1)
            s.shot(pane, f"connection_refused_final{sfx}", "connection_lost",
                   "connection refused until Claude gave up")
    finally:
        api.stop()
        s.kill_all()


def start_seeded(c: Claude, dirname: str) -> tuple[Session, Standin, str, Path, Path,
                                                   dict[str, str], Path]:
    """Trusted folder + approved key + hooks; claude started from bash; idle prompt."""
    s = c.session("seeded")
    cwd = work_dir(s, dirname)
    cfg = json.loads((s.home / ".claude.json").read_text())
    cfg["projects"] = {str(cwd): {"hasTrustDialogAccepted": True}}
    cfg["customApiKeyResponses"] = {"approved": [KEY[-20:]], "rejected": []}
    (s.home / ".claude.json").write_text(json.dumps(cfg, indent=2))
    hooks_dir = write_hooks(s)
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_anthropic.py", log)
    env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": KEY}
    pane = s.shell_pane(cwd, "seeded", env)
    s.wait(pane, "$ ", 10)
    s.type(pane, f"'{c.bin}'", enter=True)
    s.wait(pane, idle, 40)
    time.sleep(1)
    return s, api, pane, cwd, hooks_dir, env, log


def write_hooks(s: Session) -> Path:
    hooks_dir = s.home / "hook-payloads"
    hooks_dir.mkdir(exist_ok=True)
    hook_cmd = f"cat > {hooks_dir}/$(date +%s%N)-{{ev}}.json"
    settings = {"hooks": {ev: [{"matcher": "", "hooks": [{"type": "command",
                                                         "command": hook_cmd.format(ev=ev)}]}]
                          for ev in ("SessionStart", "UserPromptSubmit", "PreToolUse",
                                     "PostToolUse", "Notification", "Stop", "SessionEnd")}}
    (s.home / ".claude").mkdir(exist_ok=True)
    (s.home / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    return hooks_dir


def scene_oauth(c: Claude) -> None:
    """CLAUDE_CODE_OAUTH_TOKEN (subscriber code path): usage limit text, warning, options.

    Three fresh sessions: session limit (+ warning banner and 401 first), the same in
    TZ=Europe/Berlin, and the weekly limit. Once rejected, Claude answers every later message
    from its cached limit state without calling the API, so each limit needs its own session.
    """
    from zoneinfo import ZoneInfo

    for tz, mode in (("", "usage_limit"), ("Europe/Berlin", "usage_limit"),
                     ("", "usage_limit_weekly")):
        s = c.session("oauth")
        sfx = c.suffix + ("_tz_berlin" if tz else "")
        log = s.home.parent / f"{s.home.name}-standin.jsonl"
        reset_epoch = -(-int(time.time() + 2 * 3600) // 300) * 300  # whole 5 minutes
        api = Standin("standin_anthropic.py", log, extra=["--reset-at", str(reset_epoch)])
        zone = ZoneInfo(tz or "UTC")
        reset = dt.datetime.fromtimestamp(reset_epoch, zone)
        weekly = dt.datetime.fromtimestamp(reset_epoch + 2 * 86400, zone)
        first = not tz and mode == "usage_limit"
        try:
            cwd = work_dir(s, "proj")
            cfg = json.loads((s.home / ".claude.json").read_text())
            cfg["projects"] = {str(cwd): {"hasTrustDialogAccepted": True}}
            (s.home / ".claude.json").write_text(json.dumps(cfg))
            env = {"ANTHROPIC_BASE_URL": api.url, "CLAUDE_CODE_OAUTH_TOKEN": OAUTH}
            if tz:
                env["TZ"] = tz
            pane = s.pane(str(c.bin), cwd, "oauth", env)
            s.wait(pane, idle, 40)
            time.sleep(1)
            if first:
                s.shot(pane, f"oauth_welcome{sfx}", "idle", "CLAUDE_CODE_OAUTH_TOKEN set")
                s.type(pane, "hello [[usage_warning]]", enter=True)
                s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 40)
                scr = s.wait(pane, "You've used", 20, quiet=True)
                time.sleep(1)
                s.shot(pane, f"usage_warning_banner{sfx}", "idle",
                       "stand-in sent unified allowed_warning headers (5h utilization 0.91)",
                       evidence="You've used 91% of your"
                       if "You've used" in scr else None,
                       notes="the warning sits at the right of the footer line")
                s.type(pane, "more [[slow]]", enter=True)
                s.wait(pane, "esc to interrupt", 20)
                time.sleep(3)
                s.shot(pane, f"usage_warning_streaming{sfx}", "busy",
                       "busy after a usage warning was received")
                interrupt(s, pane)
                api.set_mode("401")
                s.type(pane, "hello", enter=True)
                scr = s.wait(pane, "Retrying in", 40, quiet=True)
                if "Retrying in" in scr:
                    time.sleep(0.5)
                    s.shot(pane, f"oauth_401_retrying{sfx}", retry_label(s.screen(pane)),
                           "OAuth token rejected with HTTP 401, Claude retrying",
                           notes="cause: HTTP 401. " + GENERIC)
                s.wait(pane, lambda x: "/login" in x and idle(x), 420)
                time.sleep(1)
                s.shot(pane, f"oauth_401_please_run_login{sfx}", "login_required",
                       "OAuth token rejected with HTTP 401", evidence="Please run /login")
                api.set_mode("normal")
                clear_input(s, pane)
            if mode == "usage_limit":
                s.type(pane, "go on [[usage_limit]]", enter=True)
                s.wait(pane, "You've hit your", 40)  # 2.1.332: "You've hit your 5-hour limit"
                time.sleep(2)
                if "What do you want to do?" in s.screen(pane):
                    s.shot(pane, f"limit_options_menu{sfx}", "rate_limit",
                           "stand-in answered 429 with anthropic-ratelimit-unified-status: "
                           "rejected, claim five_hour", reset_at=reset.isoformat(),
                           timezone=tz or None, evidence="You've hit your",
                           notes="Claude auto-runs /rate-limit-options; a menu offering ways "
                                 "out of a limit is rate_limit (FORMAT.md). The limit line is "
                                 "just above.")
                    s.keys(pane, "Escape")
                    time.sleep(1.5)
                s.shot(pane, f"session_limit_reset_time{sfx}", "rate_limit",
                       "429 unified rejected (five_hour), options menu closed",
                       reset_at=reset.isoformat(), timezone=tz or None,
                       evidence="You've hit your")
                if first:
                    s.type(pane, "are you back?", enter=True)
                    time.sleep(4)
                    s.shot(pane, f"session_limit_again{sfx}", "rate_limit",
                           "next message while still limited (no stand-in mode set)",
                           reset_at=reset.isoformat(),
                           notes="Claude repeats the limit line plus '/upgrade to increase "
                                 "your usage limit.'")
            else:
                s.type(pane, "go on [[usage_limit_weekly]]", enter=True)
                s.wait(pane, "You've hit your", 40)
                time.sleep(2)
                if "What do you want to do?" in s.screen(pane):
                    s.shot(pane, f"limit_options_menu_weekly{sfx}", "rate_limit",
                           "429 unified rejected with claim seven_day",
                           reset_at=weekly.isoformat(), evidence="You've hit your")
                    s.keys(pane, "Escape")
                    time.sleep(1.5)
                s.shot(pane, f"weekly_limit{sfx}", "rate_limit",
                       "429 unified rejected with claim seven_day, reset two days out",
                       reset_at=weekly.isoformat(), evidence="You've hit your")
        finally:
            api.stop()
            s.kill_all()


def scene_nologin(c: Claude) -> None:
    """Onboarding done but no credentials: login method picker and OAuth code prompt."""
    s = c.session("nologin")
    try:
        cwd = work_dir(s, "proj")
        cfg = json.loads((s.home / ".claude.json").read_text())
        cfg["projects"] = {str(cwd): {"hasTrustDialogAccepted": True}}
        (s.home / ".claude.json").write_text(json.dumps(cfg))
        pane = s.pane(str(c.bin), cwd, "nologin", {"BROWSER": "true"})
        scr = s.wait(pane, lambda x: "login" in x.lower() or idle(x), 40)
        time.sleep(1.5)
        scr = s.screen(pane)
        if idle(scr):
            s.shot(pane, f"no_credentials_idle_box{sfx(c)}", "login_required",
                   "no API key, no OAuth login", evidence="Not logged in",
                   notes="empty input box, but the footer says Not logged in · Run /login, so "
                         "the CLI itself says auth is missing")
            s.type(pane, "hello", enter=True)
            s.wait(pane, lambda x: "/login" in x and idle(x), 40)
            time.sleep(1)
            s.shot(pane, f"not_logged_in{sfx(c)}", "login_required",
                   "message sent with no credentials", evidence="Please run /login")
            s.type(pane, "/login", enter=True)
            time.sleep(2)
        scr = s.wait(pane, lambda x: "login method" in x.lower() or "Claude account" in x, 30)
        s.shot(pane, f"login_method_picker{sfx(c)}", "login_required", "/login with no credentials")
        s.keys(pane, "Enter")
        scr = s.wait(pane, lambda x: "Paste code" in x or "http" in x, 30, quiet=True)
        time.sleep(2)
        s.shot(pane, f"oauth_code_prompt{sfx(c)}", "login_required",
               "chose the Claude subscription login; browser cannot open offline",
               notes="the OAuth URL contains random state; no real secret")
        s.type(pane, "bogus-code#bogus-state", enter=True)
        time.sleep(6)
        s.shot(pane, f"oauth_code_rejected{sfx(c)}", "login_required",
               "pasted a bogus code; token exchange cannot reach the network")
    finally:
        s.kill_all()


def sfx(c: Claude) -> str:
    return c.suffix


def scene_small(c: Claude) -> None:
    """80x24 variants: idle, draft, permission menu, 429 retry."""
    s = c.session("small", width=80, height=24)
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_anthropic.py", log)
    try:
        cwd = work_dir(s, "proj")
        cfg = json.loads((s.home / ".claude.json").read_text())
        cfg["projects"] = {str(cwd): {"hasTrustDialogAccepted": True}}
        (s.home / ".claude.json").write_text(json.dumps(cfg))
        env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": KEY}
        pane = s.pane(str(c.bin), cwd, "small", env, width=80, height=24)
        scr = s.wait(pane, lambda x: idle(x) or "Detected a custom API key" in x, 40)
        if "Detected a custom API key" in scr:
            s.keys(pane, "Up")
            time.sleep(0.3)
            s.keys(pane, "Enter")
            s.wait(pane, idle, 30)
        time.sleep(1)
        s.shot(pane, f"welcome_80x24{c.suffix}", "idle", "80x24 pane, just started")
        s.type(pane, "hello", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 30)
        s.type(pane, "please summarise the repository layout and the build steps in detail")
        time.sleep(1)
        s.shot(pane, f"draft_wrapped_80x24{c.suffix}", "draft", "long unsent text wraps in 80 cols")
        clear_input(s, pane)
        s.type(pane, "delete it [[tool]]", enter=True)
        s.wait(pane, "Do you want to proceed?", 30)
        time.sleep(1)
        s.shot(pane, f"permission_bash_80x24{c.suffix}", "question", "Bash tool_use in 80x24")
        s.keys(pane, "Escape")
        time.sleep(1.5)
        clear_input(s, pane)
        s.type(pane, "again [[429]]", enter=True)
        s.wait(pane, "Retrying in", 40)
        time.sleep(0.5)
        scr = s.screen(pane)
        m = re.search(r"Retrying in (\d+)s", scr)
        s.shot(pane, f"429_retrying_80x24{c.suffix}", retry_label(scr),
               "429 retry-after 20 in 80x24", retry_after=int(m.group(1)) if m else None,
               notes="cause: HTTP 429. " + GENERIC)
        interrupt(s, pane)
        s.type(pane, "write it [[code429_stall]]", enter=True)
        s.wait(pane, "rate limit exceeded", 40)
        time.sleep(2)
        s.shot(pane, f"code_mentions_429_streaming_80x24{c.suffix}", "busy",
               "code with 429/rate limit streaming in 80x24", hard_negative=True)
    finally:
        api.stop()
        s.kill_all()


def scene_headless(c: Claude) -> None:
    """`claude -p` against the stand-in: success, 429, 401, prompt via stdin."""
    s = c.session("headless")
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_anthropic.py", log)
    results: dict[str, Any] = {}
    try:
        cwd = work_dir(s, "proj")
        env = {**s.env, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": KEY}
        base = [str(c.bin), "-p", "--model", "sonnet", "--permission-mode", "plan"]
        runs: dict[str, tuple[list[str], str | None, str]] = {
            "arg_ok": ([*base, "is the build green?"], None, "normal"),
            "stdin_ok": (base, "is the build green?", "normal"),
            "json_ok": ([*base, "--output-format", "json", "status?"], None, "normal"),
            "429": ([*base, "status?"], None, "429_fast"),
            "usage_limit_apikey": ([*base, "status?"], None, "usage_limit"),
            "401": ([*base, "status?"], None, "401"),
        }
        for name, (cmd, stdin, mode) in runs.items():
            api.set_mode(mode)
            t0 = time.time()
            try:
                p = subprocess.run(cmd, input=stdin or "", capture_output=True, text=True,
                                   env=env, cwd=cwd, timeout=400)
                results[name] = {"cmd": " ".join(cmd[1:]), "stdin": stdin, "rc": p.returncode,
                                 "stdout": p.stdout[-1500:], "stderr": p.stderr[-1500:],
                                 "seconds": round(time.time() - t0, 1)}
            except subprocess.TimeoutExpired:
                results[name] = {"cmd": " ".join(cmd[1:]), "timeout": 400}
            print(f"  headless {name}: {results[name].get('rc')}", flush=True)
        env2 = {**s.env, "ANTHROPIC_BASE_URL": api.url, "CLAUDE_CODE_OAUTH_TOKEN": OAUTH}
        api.set_mode("usage_limit")
        p = subprocess.run([*base, "status?"], capture_output=True, text=True, env=env2,
                           cwd=cwd, timeout=400, input="")
        results["usage_limit_oauth"] = {"rc": p.returncode, "stdout": p.stdout[-1500:],
                                        "stderr": p.stderr[-1500:]}
        FACTS["headless"] = results
    finally:
        api.stop()
        s.kill_all()


def scene_help(c: Claude) -> None:
    s = c.session("help")
    try:
        env = {**s.env}
        text = run_help([[str(c.bin), "--version"], [str(c.bin), "--help"],
                         [str(c.bin), "agents", "--help"], [str(c.bin), "auth", "--help"],
                         [str(c.bin), "update", "--help"]], env, s.home)
        text = text.replace(str(s.home) + "/", "/home/user/")
        if not c.suffix:
            copy_help("claude", text)
    finally:
        s.kill_all()


SCENES: dict[str, Callable[[Claude], None]] = {
    "first_run": scene_first_run, "main": scene_main, "errors": scene_errors,
    "errors_net": scene_errors_net,
    "exits": scene_exits, "oauth": scene_oauth,
    "nologin": scene_nologin, "small": scene_small, "headless": scene_headless,
    "help": scene_help,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="claude", help="folder under /tmp/realcli")
    ap.add_argument("--suffix", default="", help="appended to fixture slugs (e.g. _latest)")
    ap.add_argument("--only", default=",".join(SCENES), help="comma-separated scene names")
    args = ap.parse_args()
    c = Claude(args.dir, args.suffix)
    print(f"claude {c.version} from {c.bin}", flush=True)
    FACTS["version"] = c.version
    facts_path = REALCLI / f"claude-facts{args.suffix}.json"
    if facts_path.exists():
        FACTS.update(json.loads(facts_path.read_text()))
        FACTS["version"] = c.version
    for name in args.only.split(","):
        print(f"scene {name}", flush=True)
        try:
            SCENES[name](c)
            FACTS.setdefault("errors", {}).pop(name, None)
        except Exception:  # keep going: one broken scene must not lose the others
            traceback.print_exc()
            FACTS.setdefault("errors", {})[name] = traceback.format_exc()[-2000:]
        merged = json.loads(facts_path.read_text()) if facts_path.exists() else {}
        merged.update(FACTS)  # other runs (scenes in parallel) may have written meanwhile
        write_json(facts_path, merged)
    print(json.dumps(FACTS, indent=2, default=str)[:6000])


if __name__ == "__main__":
    main()
