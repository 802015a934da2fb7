"""Capture real Gemini CLI screens, process tree, session files, hooks and headless behaviour.

Needs tmux, node/npm and the CLI under /tmp/realcli (override with PITCREW_REALCLI)::

    npm install --prefix /tmp/realcli/gemini @google/gemini-cli

Run from the repo root with the project venv (psutil)::

    .venv/bin/python tests/capture/capture_gemini.py                 # all scenes
    .venv/bin/python tests/capture/capture_gemini.py --only main,errors

Scenes: onboarding, main, errors, exits, small, headless, help (see SCENES). Each starts
tests/capture/standin_gemini.py on 127.0.0.1 and a throwaway HOME; Gemini CLI is pointed at it
with GOOGLE_GEMINI_BASE_URL and a fake GEMINI_API_KEY (AIza-test-0000), auth type
gemini-api-key in ~/.gemini/settings.json. Fixtures go to tests/fixtures/screens/gemini/,
sessions/gemini/, processes/gemini.json, cli-help/gemini.txt; facts for the notes to
/tmp/realcli/gemini-facts.json. All processes and the tmux server are killed at the end.
Gemini CLI takes 10-25 s to start on a small machine, so waits are generous.
"""

from __future__ import annotations

import argparse
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
KEY = "AIza-test-0000"
BUSY = "esc to cancel"
PROMPT = "Type your message"


def idle(screen: str) -> bool:
    return BUSY not in screen and PROMPT in screen


def has_exit(screen: str) -> bool:
    return bool(re.search(r"exit=\d+\n", screen))


def last_exit(screen: str) -> str | None:
    found = re.findall(r"exit=(\d+)", screen)
    return found[-1] if found else None


def at_shell(screen: str) -> bool:
    return screen.rstrip().endswith("$")


class Gemini:
    def __init__(self) -> None:
        self.bin = REALCLI / "gemini" / "node_modules" / ".bin" / "gemini"
        out = subprocess.run([str(self.bin), "--version"], capture_output=True, text=True,
                             env={**os.environ, "HOME": "/tmp"}).stdout
        self.version = out.strip().split()[-1] if out.strip() else "unknown"

    def session(self, width: int = 120, height: int = 40) -> Session:
        return Session("gemini", self.version, "capture_gemini.py", width=width, height=height)

    @staticmethod
    def seed(s: Session, trusted: list[Path], hooks_dir: Path | None = None) -> None:
        d = s.home / ".gemini"
        d.mkdir(parents=True, exist_ok=True)
        settings: dict[str, object] = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        if hooks_dir:
            cmd = f"cat > {hooks_dir}/$(date +%s%N)-{{ev}}.json"
            settings["hooks"] = {ev: [{"matcher": "*", "hooks": [
                {"type": "command", "command": cmd.format(ev=ev), "timeout": 10000}]}]
                for ev in ("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool",
                           "Notification", "AfterAgent", "SessionEnd")}
        (d / "settings.json").write_text(json.dumps(settings, indent=2))
        (d / "trustedFolders.json").write_text(json.dumps({str(p): "TRUST_FOLDER"
                                                           for p in trusted}))


def work_dir(s: Session, name: str) -> Path:
    d = s.home.parent / f"{s.home.name}-work" / name
    d.mkdir(parents=True, exist_ok=True)
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


def start_seeded(c: Gemini, dirname: str, width: int = 120, height: int = 40,
                 hooks: bool = True) -> tuple[Session, Standin, str, Path, Path]:
    s = c.session(width, height)
    cwd = work_dir(s, dirname)
    hooks_dir = s.home / "hook-payloads"
    hooks_dir.mkdir()
    c.seed(s, [cwd], hooks_dir if hooks else None)
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_gemini.py", log)
    s.env.update({"GOOGLE_GEMINI_BASE_URL": api.url, "GEMINI_API_KEY": KEY})
    pane = s.shell_pane(cwd, "seeded", width=width, height=height)
    s.wait(pane, "$ ", 10)
    s.type(pane, f"'{c.bin}'", enter=True)
    s.wait(pane, idle, 90)
    time.sleep(2)
    return s, api, pane, cwd, hooks_dir


# ------------------------------------------------------------------------------------------


def scene_onboarding(c: Gemini) -> None:
    """No settings: trust picker (CLI restarts itself), auth picker, Google OAuth code prompt."""
    s = c.session()
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_gemini.py", log)
    try:
        cwd = work_dir(s, "proj")
        pane = s.pane(str(c.bin), cwd, "onb", {"GOOGLE_GEMINI_BASE_URL": api.url})
        s.wait(pane, "Do you trust the files in this folder?", 90)
        time.sleep(1)
        s.shot(pane, "trust_folder", "picker", "first start in an untrusted folder",
               evidence="Do you trust the files in this folder?")
        s.keys(pane, "Enter")
        s.wait(pane, "restarting", 20, quiet=True)
        time.sleep(0.5)
        s.shot(pane, "restarting_after_trust", "busy",
               "chose 'Trust folder'; the CLI restarts itself",
               notes="'Gemini CLI is restarting to apply the trust changes...'; transient")
        s.wait(pane, "How would you like to authenticate", 90)
        time.sleep(1)
        s.shot(pane, "auth_method_picker", "login_required", "no auth configured",
               evidence="How would you like to authenticate")
        s.keys(pane, "Down")
        time.sleep(0.3)
        s.keys(pane, "Enter")
        time.sleep(3)
        scr = s.screen(pane)
        s.shot(pane, "api_key_dialog", "login_required",
               "chose 'Use Gemini API Key' with no GEMINI_API_KEY set")
        FACTS["api_key_dialog"] = scr.strip()[-800:]
        s.keys(pane, "Escape")
        time.sleep(2)
        s.wait(pane, "How would you like to authenticate", 20, quiet=True)
        s.keys(pane, "Up")
        time.sleep(0.3)
        s.keys(pane, "Enter")
        s.wait(pane, "Enter the authorization code", 90)
        time.sleep(1)
        s.shot(pane, "oauth_code_prompt", "login_required",
               "chose 'Sign in with Google'; no browser, so the URL + code prompt",
               evidence="Enter the authorization code",
               notes="the URL holds a random PKCE challenge/state only")
        s.type(pane, "bogus-code", enter=True)
        s.wait(pane, "Failed to authenticate", 40)
        time.sleep(3)
        s.shot(pane, "oauth_code_failed", "login_required", "bogus code, token endpoint offline")
        s.keys(pane, "C-c")
        st = s.dead_status(pane, 30)
        FACTS["oauth_prompt_ctrl_c_status"] = st
        if st is not None:
            s.wait(pane, "Pane is dead", 10, quiet=True)
            s.shot(pane, "oauth_code_ctrl_c_exit", "crashed",
                   "Ctrl-C at the authorization code prompt", notes=f"exit status {st}")
    finally:
        api.stop()
        s.kill_all()


def scene_main(c: Gemini) -> None:
    s, api, pane, _cwd, _hooks_dir = start_seeded(c, "my proj_v1.2")
    try:
        s.shot(pane, "welcome", "idle", "seeded gemini-api-key auth, trusted folder",
               evidence=PROMPT, notes="'>   Type your message or @path/to/file' is the dim "
                                      "placeholder of the empty input box")
        save_tree(s, pane, c.version)
        s.type(pane, "fix the failing test in utils.py")
        time.sleep(1)
        s.shot(pane, "single_line", "draft", "typed, not sent")
        clear_input(s, pane)
        s.type(pane, "first line of a longer request\\")
        s.keys(pane, "Enter")
        s.type(pane, "second line: also update the changelog")
        time.sleep(1)
        s.shot(pane, "multi_line", "draft", "typed with backslash+Enter, not sent")
        clear_input(s, pane)
        clear_input(s, pane)
        time.sleep(0.5)
        FACTS["after_clear"] = s.screen(pane).strip()[-400:]
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 60)
        time.sleep(1)
        s.shot(pane, "after_reply", "idle", "normal streamed reply finished")
        s.type(pane, "refactor the parser [[slow]]", enter=True)
        s.wait(pane, "Working through the refactor", 60)
        time.sleep(4)
        scr = s.screen(pane)
        s.shot(pane, "streaming", "busy", "stand-in streams text slowly",
               evidence=BUSY if BUSY in scr else None)
        interrupt(s, pane)
        time.sleep(1)
        s.shot(pane, "after_interrupt", "idle" if idle(s.screen(pane)) else "unknown",
               "Esc during a reply, input cleared", evidence="Request cancelled")
        s.type(pane, "look at the logs [[stall]]", enter=True)
        s.wait(pane, BUSY, 60)
        time.sleep(20)
        s.shot(pane, "stalled_stream_20s", "busy", "one empty SSE chunk then nothing, 20 s in")
        time.sleep(70)
        scr = s.screen(pane)
        s.shot(pane, "stalled_stream_90s", "busy" if BUSY in scr else "connection_lost",
               "same stalled stream, 90 s in")
        interrupt(s, pane)
        s.type(pane, "delete the scratch file [[tool]]", enter=True)
        s.wait(pane, "Allow execution", 60)
        time.sleep(1)
        s.shot(pane, "permission_shell", "question", "stand-in sent a run_shell_command call",
               evidence="Allow execution of")
        s.keys(pane, "Escape")
        time.sleep(2)
        clear_input(s, pane)
        s.wait(pane, idle, 20, quiet=True)
        s.type(pane, "set up caching [[question]]", enter=True)
        scr = s.wait(pane, lambda x: "Which database" in x, 60, quiet=True)
        time.sleep(1.5)
        if "Which database" in scr:
            s.shot(pane, "ask_user", "question", "stand-in sent an ask_user call",
                   evidence="Which database should the cache use?")
        FACTS["ask_user_screen"] = s.screen(pane).strip()[-900:]
        s.keys(pane, "Escape")
        time.sleep(2)
        interrupt(s, pane)
        s.wait(pane, idle, 20, quiet=True)
        s.type(pane, "write the retry helper [[code429]]", enter=True)
        s.wait(pane, lambda x: "back off" in x and idle(x), 60)
        time.sleep(1)
        s.shot(pane, "code_mentions_429", "idle", "reply with code mentioning 429/rate limit",
               hard_negative=True)
        s.type(pane, "write it again [[code429_stall]]", enter=True)
        s.wait(pane, lambda x: x.count("rate limit exceeded") >= 2, 60)
        time.sleep(3)
        s.shot(pane, "code_mentions_429_streaming", "busy",
               "code mentioning 429/rate limit streamed, then the stream stalls",
               hard_negative=True)
        interrupt(s, pane)
    finally:
        api.stop()
        s.kill_all()


def save_tree(s: Session, pane: str, version: str) -> None:
    rows = capkit.process_tree(s.tmux.pane_pid(pane))  # type: ignore[union-attr]
    for row in rows:
        row["cmdline"] = [str(a).replace(str(s.home) + "/", "/home/user/")
                          for a in cast(list[str], row["cmdline"])]
    capkit.save_processes("gemini", rows,
                          f"gemini {version} started from bash in a tmux pane as `gemini` (npm "
                          "bin symlink to bundle/gemini.js). node runs the bundle and relaunches "
                          "itself as a child node process (extra heap flags), so there are two "
                          "node processes; psutil name is 'node', the script path is argv[1]")


def seeded_hello(c: Gemini) -> tuple[Session, Standin, str]:
    s, api, pane, _cwd, _hooks_dir = start_seeded(c, "proj", hooks=False)
    s.type(pane, "hello there", enter=True)
    time.sleep(3)
    if "Hello from" not in s.screen(pane) and "> hello there" in s.screen(pane):
        s.keys(pane, "Enter")  # typed before the input box was ready
    s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 60)
    return s, api, pane


def give_up_or_shot(s: Session, pane: str, slug: str, final_state: str, how: str,
                    timeout: float, evidence: str | None = None) -> None:
    """Wait for Gemini CLI to give up; shoot the final screen, or the still-busy one."""
    scr = s.wait(pane, idle, timeout, quiet=True)
    time.sleep(1)
    if idle(scr):
        s.shot(pane, f"{slug}_final", final_state, how + " until Gemini CLI gave up",
               evidence=evidence)
    else:
        minutes = int(timeout // 60)
        s.shot(pane, f"{slug}_hidden_retry_{minutes}min", "busy", how + f", {minutes} min in",
               notes="still only the 'Thinking... (esc to cancel, …)' spinner: Gemini CLI "
                     "keeps retrying and shows nothing about the error")
        interrupt(s, pane)
    clear_input(s, pane)


def scene_errors(c: Gemini) -> None:
    """Per-minute 429 (RetryInfo 20.5 s): silent retries behind the spinner (10+ minutes)."""
    s, api, pane = seeded_hello(c)
    try:
        s.type(pane, "continue [[429]]", enter=True)
        s.wait(pane, BUSY, 60)
        time.sleep(30)
        s.shot(pane, "429_hidden_retry_30s", "busy",
               "stand-in answers every main-model turn with HTTP 429 RESOURCE_EXHAUSTED "
               "(per-minute QuotaFailure, RetryInfo 20.5s); 30 s in",
               notes="Gemini CLI retries silently: the only sign is the spinner's timer. "
                     "What the CLI shows is busy, though the truth is rate-limited")
        give_up_or_shot(s, pane, "429", "rate_limit", "per-minute 429 on every attempt", 600,
                        "Please wait and try again later")
    finally:
        api.stop()
        s.kill_all()


def scene_errors_quota(c: Gemini) -> None:
    """Per-day quota (terminal) dialog, then a 429 with RetryInfo 2 s until the final error."""
    s, api, pane = seeded_hello(c)
    try:
        s.type(pane, "continue [[quota_daily]]", enter=True)
        scr = s.wait(pane, lambda x: "Usage limit reached" in x or idle(x), 120)
        time.sleep(1)
        s.shot(pane, "usage_limit_dialog", "rate_limit",
               "HTTP 429 with a per-day QuotaFailure (terminal quota) on the main model",
               evidence="Usage limit reached",
               notes="Gemini's limit-options dialog (Keep trying / Stop): a menu offering ways "
                     "out of a limit is rate_limit (FORMAT.md). No reset time is shown")
        if "Usage limit reached" in scr:
            s.keys(pane, "Down")
            time.sleep(0.3)
            s.keys(pane, "Enter")
            s.wait(pane, idle, 30, quiet=True)
            time.sleep(1)
            s.shot(pane, "daily_quota_exhausted", "rate_limit", "chose 'Stop' in the dialog",
                   evidence="You have exhausted your daily quota on this model")
        clear_input(s, pane)
        s.type(pane, "continue [[429_fast]]", enter=True)
        s.wait(pane, BUSY, 60)
        give_up_or_shot(s, pane, "429_fast", "rate_limit",
                        "per-minute 429 with RetryInfo 2s on every attempt", 420,
                        "Please wait and try again later")
    finally:
        api.stop()
        s.kill_all()


def scene_errors_5xx(c: Gemini) -> None:
    """HTTP 429 without details, 500 and 503 on every attempt."""
    s, api, pane = seeded_hello(c)
    try:
        for mode, state in (("500", "connection_lost"), ("503", "connection_lost"),
                            ("429_bare", "rate_limit")):
            s.type(pane, f"continue [[{mode}]]", enter=True)
            s.wait(pane, BUSY, 60)
            time.sleep(8)
            s.shot(pane, f"{mode}_hidden_retry", "busy", f"HTTP {mode} on every attempt, 8 s in",
                   notes="retries are silent behind the spinner")
            give_up_or_shot(s, pane, mode, state, f"HTTP {mode} on every attempt", 300)
    finally:
        api.stop()
        s.kill_all()


def scene_errors_net(c: Gemini) -> None:
    """Invalid API key (HTTP 400 API_KEY_INVALID), then connection refused."""
    s, api, pane = seeded_hello(c)
    try:
        api.set_mode("400_key")
        s.type(pane, "hello again", enter=True)
        give_up_or_shot(s, pane, "invalid_api_key", "login_required",
                        "HTTP 400 INVALID_ARGUMENT API_KEY_INVALID", 300, "API key not valid")
        api.set_mode("normal")
        api.stop()
        s.type(pane, "are you there?", enter=True)
        s.wait(pane, BUSY, 60, quiet=True)
        time.sleep(8)
        s.shot(pane, "connection_refused_hidden_retry", "busy",
               "stand-in stopped (connection refused), 8 s in")
        give_up_or_shot(s, pane, "connection_refused", "connection_lost",
                        "connection refused", 300)
    finally:
        api.stop()
        s.kill_all()


def scene_exits(c: Gemini) -> None:
    s, api, pane, cwd, hooks_dir = start_seeded(c, "my proj_v1.2")
    try:
        s.type(pane, "hello there", enter=True)
        s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 60)
        s.type(pane, "delete the scratch file [[tool]]", enter=True)
        s.wait(pane, "Allow execution", 60)
        s.keys(pane, "Escape")
        time.sleep(2)
        clear_input(s, pane)
        s.wait(pane, idle, 20, quiet=True)
        time.sleep(2)
        s.type(pane, "/quit")
        time.sleep(2)
        s.keys(pane, "Enter")
        scr = s.wait(pane, at_shell, 30)
        time.sleep(0.5)
        s.shot(pane, "after_quit_shell", "crashed", "/quit; gemini was started from bash",
               notes="clean exit (status 0). FORMAT labels a shell prompt where the agent was "
                     "'crashed'. The session summary box with the resume hint stays above.")
        m = re.search(r"gemini --resume ([0-9a-f-]{36})", scr)
        sid = m.group(1) if m else None
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, has_exit, 10)
        FACTS["exit_status_/quit"] = last_exit(scr)
        FACTS["session_id"] = sid
        FACTS["cwd"] = str(cwd)
        gem = s.home / ".gemini"
        for name in ("projects.json", "trustedFolders.json", "settings.json"):
            if (gem / name).exists():
                FACTS[name] = (gem / name).read_text().replace(str(s.home) + "/", "/home/user/")
        chats = sorted(gem.rglob("session-*.json*"))
        FACTS["chat_files"] = [str(p.relative_to(s.home)) for p in chats]
        FACTS["gemini_tree"] = sorted(str(p.relative_to(s.home)) for p in gem.rglob("*")
                                      if p.is_file())[:80]
        for p in chats[-1:]:
            copy_session_sample(s.home, str(p.relative_to(s.home)), "gemini", max_lines=8,
                                scrub=shorten_json_line)
        if (gem / "projects.json").exists():
            copy_session_sample(s.home, ".gemini/projects.json", "gemini", max_lines=20)
        payloads = sorted(hooks_dir.glob("*.json"))
        FACTS["hook_events_seen"] = [p.stem.split("-", 1)[1] for p in payloads]
        dst = capkit.FIXTURES / "sessions" / "gemini" / "hook-payloads"
        seen: set[str] = set()
        for p in payloads:
            ev = p.stem.split("-", 1)[1]
            if ev not in seen:
                seen.add(ev)
                dst.mkdir(parents=True, exist_ok=True)
                text = p.read_text().replace(str(s.home) + "/", "/home/user/")
                (dst / f"{ev}.json").write_text(text)
        # --list-sessions, resume by id, latest
        s.type(pane, f"clear; '{c.bin}' --list-sessions; echo exit=$?", enter=True)
        scr = s.wait(pane, has_exit, 90, quiet=True)
        FACTS["list_sessions"] = scr.strip()[-900:]
        s.type(pane, f"clear; '{c.bin}' --resume {sid}", enter=True)
        scr = s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 90, quiet=True)
        time.sleep(4)  # the box accepts keys a few seconds after it is drawn
        FACTS["resume_same_cwd_restores"] = "Hello from the stand-in" in s.screen(pane)
        s.shot(pane, "resumed_by_id", "idle", "`gemini --resume <uuid>` in the same cwd")
        s.keys(pane, "C-c")
        time.sleep(1)
        scr = s.screen(pane)
        if not at_shell(scr):
            s.shot(pane, "ctrl_c_once", "idle", "one Ctrl-C at an empty prompt")
            s.keys(pane, "C-c")
        scr = s.wait(pane, at_shell, 20, quiet=True)
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, has_exit, 10, quiet=True)
        FACTS["exit_status_ctrl_c_x2"] = last_exit(scr)
        s.type(pane, f"clear; '{c.bin}' --resume latest", enter=True)
        scr = s.wait(pane, lambda x: "Hello from the stand-in" in x and idle(x), 90, quiet=True)
        FACTS["resume_latest_restores"] = "Hello from the stand-in" in scr
        time.sleep(4)
        s.keys(pane, "C-d")
        time.sleep(1)
        scr = s.screen(pane)
        if not at_shell(scr):
            FACTS["ctrl_d_once"] = scr.strip()[-300:]
            s.keys(pane, "C-d")
            time.sleep(1.5)
        scr = s.wait(pane, at_shell, 20, quiet=True)
        if at_shell(scr):
            s.type(pane, "echo exit=$?", enter=True)
            scr = s.wait(pane, has_exit, 10, quiet=True)
            FACTS["exit_status_ctrl_d_x2"] = last_exit(scr)
        else:
            FACTS["exit_status_ctrl_d_x2"] = "did not exit"
            s.keys(pane, "C-c")
            time.sleep(0.5)
            s.keys(pane, "C-c")
            s.wait(pane, at_shell, 20, quiet=True)
        bogus = str(uuid.uuid4())
        s.type(pane, f"clear; '{c.bin}' --resume {bogus}; echo exit=$?", enter=True)
        scr = s.wait(pane, lambda x: has_exit(x) or idle(x), 90, quiet=True)
        time.sleep(1)
        FACTS["resume_unknown_id"] = s.screen(pane).strip()[-700:]
        if not has_exit(scr):
            s.keys(pane, "C-c")
            time.sleep(0.5)
            s.keys(pane, "C-c")
            s.wait(pane, has_exit, 20, quiet=True)
        other = work_dir(s, "other")
        s.type(pane, f"clear; cd '{other}'; '{c.bin}' --resume {sid}; echo exit=$?",
               enter=True)
        scr = s.wait(pane, lambda x: has_exit(x) or idle(x) or "trust" in x, 90, quiet=True)
        time.sleep(2)
        FACTS["resume_other_cwd"] = s.screen(pane).strip()[-900:]
        if not has_exit(s.screen(pane)):
            s.shot(pane, "resume_other_cwd", "idle" if idle(s.screen(pane)) else "picker",
                   "`gemini --resume <uuid>` from another cwd")
            for key in ("Escape", "C-c", "C-c"):
                s.keys(pane, key)
                time.sleep(0.8)
            s.wait(pane, has_exit, 20, quiet=True)
        # kill -9 in the shell and as the pane command
        s.type(pane, f"clear; cd '{cwd}'; '{c.bin}' --resume latest", enter=True)
        s.wait(pane, idle, 90)
        victim = innermost_node(s, pane)
        FACTS["kill9_victim"] = victim
        if victim:
            os.kill(victim, 9)
        scr = s.wait(pane, at_shell, 20, quiet=True)
        time.sleep(1)
        s.shot(pane, "killed_shell_prompt", "crashed", "kill -9 of the innermost gemini node "
                                                        "process")
        s.type(pane, "echo exit=$?", enter=True)
        scr = s.wait(pane, has_exit, 10, quiet=True)
        FACTS["exit_status_kill9_in_shell"] = last_exit(scr)
        FACTS["kill9_shell_screen"] = scr.strip()[-400:]
        pane2 = s.pane(f"'{c.bin}' --resume latest", cwd, "direct")
        s.wait(pane2, idle, 90)
        victim = innermost_node(s, pane2)
        if victim:
            os.kill(victim, 9)
        st = s.dead_status(pane2, 30)
        s.wait(pane2, "Pane is dead", 20, quiet=True)
        s.shot(pane2, "killed_pane_dead", "crashed",
               "kill -9 of the innermost gemini node process (pane command)",
               notes=f"pane_dead_status={st}")
        FACTS["exit_status_kill9_pane"] = st
    finally:
        api.stop()
        s.kill_all()


def innermost_node(s: Session, pane: str) -> int | None:
    import psutil

    root = psutil.Process(s.tmux.pane_pid(pane))  # type: ignore[union-attr]
    nodes = [p for p in root.children(recursive=True) if p.name() == "node"]
    return nodes[-1].pid if nodes else None


def shorten_json_line(line: str) -> str:
    try:
        obj = json.loads(line)
    except ValueError:
        return line

    def cut(v: object) -> object:
        if isinstance(v, str) and len(v) > 200:
            return v[:200] + "…[trimmed]"
        if isinstance(v, list):
            return [cut(x) for x in v[:8]]
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        return v

    return json.dumps(cut(obj), ensure_ascii=False) + "\n"


def scene_small(c: Gemini) -> None:
    s, api, pane, _cwd, _hooks_dir = start_seeded(c, "proj", 80, 24, hooks=False)
    try:
        s.shot(pane, "welcome_80x24", "idle", "80x24 pane")
        s.type(pane, "please summarise the repository layout and the build steps in detail")
        time.sleep(1)
        s.shot(pane, "draft_wrapped_80x24", "draft", "long unsent text in 80 cols")
        clear_input(s, pane)
        s.type(pane, "delete it [[tool]]", enter=True)
        s.wait(pane, "Allow execution", 60)
        time.sleep(1)
        s.shot(pane, "permission_shell_80x24", "question", "shell confirmation in 80x24")
        s.keys(pane, "Escape")
        time.sleep(2)
        clear_input(s, pane)
        s.type(pane, "go [[quota_daily]]", enter=True)
        s.wait(pane, "Usage limit reached", 120)
        time.sleep(1)
        s.shot(pane, "usage_limit_dialog_80x24", "rate_limit", "per-day quota dialog in 80x24",
               evidence="Usage limit reached")
        s.keys(pane, "Down")
        time.sleep(0.3)
        s.keys(pane, "Enter")
        s.wait(pane, idle, 30, quiet=True)
        time.sleep(1)
        s.shot(pane, "daily_quota_exhausted_80x24", "rate_limit", "after 'Stop', 80x24",
               evidence="exhausted your daily quota")
    finally:
        api.stop()
        s.kill_all()


def scene_headless(c: Gemini) -> None:
    s = c.session()
    log = s.home.parent / f"{s.home.name}-standin.jsonl"
    api = Standin("standin_gemini.py", log)
    results: dict[str, Any] = {}
    try:
        cwd = work_dir(s, "proj")
        c.seed(s, [cwd])
        env = {**s.env, "GOOGLE_GEMINI_BASE_URL": api.url, "GEMINI_API_KEY": KEY}
        base = [str(c.bin), "--approval-mode", "plan", "-m", "gemini-2.5-flash"]
        runs: dict[str, tuple[list[str], str | None, str, dict[str, str]]] = {
            "arg_ok": ([*base, "-p", "is the build green?"], None, "normal", {}),
            "stdin_ok": ([*base, "-p", ""], "is the build green?", "normal", {}),
            "stdin_only": (base, "is the build green?", "normal", {}),
            "json_ok": ([*base, "-p", "status?", "-o", "json"], None, "normal", {}),
            "daily_quota": ([*base, "-p", "status?"], None, "quota_daily", {}),
            "429_fast": ([*base, "-p", "status?"], None, "429_fast", {}),
            "bad_key": ([*base, "-p", "status?"], None, "400_key", {}),
            "no_key": ([*base, "-p", "status?"], None, "normal", {"GEMINI_API_KEY": ""}),
        }
        for name, (cmd, stdin, mode, extra) in runs.items():
            api.set_mode(mode)
            run_env = {**env, **extra}
            if extra.get("GEMINI_API_KEY") == "":
                run_env.pop("GEMINI_API_KEY")
            t0 = time.time()
            try:
                p = subprocess.run(cmd, input=stdin if stdin is not None else "",
                                   capture_output=True, text=True, env=run_env, cwd=cwd,
                                   timeout=420)
                results[name] = {"cmd": " ".join(cmd[1:]), "stdin": stdin, "rc": p.returncode,
                                 "stdout": p.stdout[-1500:], "stderr": p.stderr[-2000:],
                                 "seconds": round(time.time() - t0, 1)}
            except subprocess.TimeoutExpired:
                results[name] = {"cmd": " ".join(cmd[1:]), "timeout": 420}
            print(f"  headless {name}: {results[name].get('rc')}", flush=True)
        FACTS["headless"] = results
    finally:
        api.stop()
        s.kill_all()


def scene_help(c: Gemini) -> None:
    s = c.session()
    try:
        b = str(c.bin)
        text = run_help([[b, "--version"], [b, "--help"], [b, "hooks", "--help"]], s.env, s.home)
        copy_help("gemini", text.replace(str(s.home) + "/", "/home/user/"))
    finally:
        s.kill_all()


SCENES: dict[str, Callable[[Gemini], None]] = {
    "onboarding": scene_onboarding, "main": scene_main, "errors": scene_errors,
    "errors_quota": scene_errors_quota, "errors_5xx": scene_errors_5xx,
    "errors_net": scene_errors_net,
    "exits": scene_exits, "small": scene_small, "headless": scene_headless, "help": scene_help,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(SCENES))
    args = ap.parse_args()
    c = Gemini()
    print(f"gemini {c.version} from {c.bin}", flush=True)
    facts_path = REALCLI / "gemini-facts.json"
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
        merged.update(FACTS)
        write_json(facts_path, merged)
    print(json.dumps(FACTS, indent=2, default=str)[:6000])


if __name__ == "__main__":
    main()
