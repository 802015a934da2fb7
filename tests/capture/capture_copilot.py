"""Capture real GitHub Copilot CLI (npm `@github/copilot`) screens into
tests/fixtures/screens/copilot/.

Copilot CLI has a documented BYOK mode (``copilot help providers``): with
``COPILOT_PROVIDER_BASE_URL`` set it sends its model requests to that OpenAI-compatible
endpoint and needs no GitHub login. The capture points it at the local stand-in
(standin_openai_chat.py, wrapped by standin_copilot.py for stand-alone use) with
``COPILOT_MODEL=gpt-4.1`` and a fake ``COPILOT_PROVIDER_API_KEY``. Screens about GitHub login
are captured without BYOK (offline, so sign-in fails the way it does for a user without
network). Every scenario starts a fresh copilot in its own tmux pane (inside ``bash --norc``).

Usage::

    /work/main/.venv/bin/python tests/capture/capture_copilot.py
    /work/main/.venv/bin/python tests/capture/capture_copilot.py --only login rate_limit

Without COPILOT_BIN the CLI is installed (once) with ``npm install --prefix
$PITCREW_REALCLI/copilot @github/copilot`` (PITCREW_REALCLI defaults to /tmp/realcli2). It always
runs with a throwaway HOME, DISABLE_AUTOUPDATER=1, COPILOT_AUTO_UPDATE=false and a throwaway
NPM_CONFIG_PREFIX. Note each fresh HOME gets a ~235 MB unpacked copy of the CLI in
``~/.cache/copilot/pkg``. ``--only`` takes substrings of scenario names.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from capkit_b import Session, ensure_installed, exit_probe, kill_tree

PROVIDER = "copilot"
PROMPT_FOOTER = "/ commands"
TRUST = "Do you trust the files in this folder?"
BUSY = re.compile(r"esc interrupt|esc to cancel|Thinking|Working")


class Copilot:
    def __init__(self, only: list[str]) -> None:
        binary = os.environ.get("COPILOT_BIN")
        self.bin = binary or str(ensure_installed("copilot", "@github/copilot") / "copilot")
        out = subprocess.run([self.bin, "--version"], capture_output=True, text=True,
                             env={**os.environ, "COPILOT_AUTO_UPDATE": "false"}).stdout
        found = re.search(r"(\d+\.\d+\.\d+)", out)
        self.version = found.group(1) if found else out.strip()
        self.s = Session(PROVIDER, self.version, "capture_copilot.py", out_filter=only,
                         notes=NOTES)
        self.proj = self.s.workdir("cp-proj")
        self.trust(self.proj)
        self.path_env = {"PATH": f"{Path(self.bin).parent}:{os.environ.get('PATH', '')}",
                         "COPILOT_AUTO_UPDATE": "false"}
        self.env = {**self.path_env, **self.byok(self.s.server.base_url)}

    @staticmethod
    def byok(base_url: str) -> dict[str, str]:
        return {"COPILOT_PROVIDER_BASE_URL": base_url,
                "COPILOT_PROVIDER_API_KEY": "sk-fake-standin-0000",
                "COPILOT_MODEL": "gpt-4.1"}

    def trust(self, *folders: Path) -> None:
        """Pre-answer the folder-trust prompt the way "remember this folder" does."""
        path = self.s.home / ".copilot" / "config.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"firstLaunchAt": "2026-11-30T00:00:00.000Z",
                                    "appTipShown": True,
                                    "trustedFolders": [str(f) for f in folders]}, indent=2))

    def launch(self, args: str = "", env: dict[str, str] | None = None, cwd: Path | None = None,
               width: int = 120, height: int = 40, ready: str | re.Pattern[str] = PROMPT_FOOTER
               ) -> str:
        pane = self.s.start(f"copilot {args}".strip(), cwd or self.proj, env or self.env,
                            width=width, height=height)
        self.s.wait(pane, ready, timeout=90)
        time.sleep(1.5)
        return pane

    def send(self, pane: str, text: str) -> None:
        self.s.type(pane, text)
        time.sleep(0.6)
        self.s.keys(pane, "Enter")

    def idle_again(self, pane: str, timeout: float = 60) -> str:
        return self.s.wait(pane, PROMPT_FOOTER, absent=BUSY, timeout=timeout)


# Default notes for fixtures whose scenario passes none (what to know when reading them).
NOTES: dict[str, str] = {
    "busy__429_retry_after_5s":
        "Every request gets HTTP 429 (retry-after 7). Copilot retries silently: only the busy "
        "footer shows; the final error comes ~40 s later (rate_limit__429_retry_after_final).",
    "busy__waiting_for_first_token":
        "Stand-in accepted the request but never sent headers; footer '◉ Working esc esc edit "
        "prompt'.",
    "idle__empty_prompt":
        "Empty input is a bare '❯' between two rules; no placeholder text. Footer '… / commands"
        " · ? help …'.",
    "draft__multiline":
        "ctrl+j inserts a newline; while the input holds text the footer changes to "
        "'Interactive · Manual Approval · @ files · # issues'.",
    "idle__ctrl_c_once_hint":
        "Footer replaced by 'ctrl+c again to exit'; still idle.",
    "login_required__please_use_login":
        "No BYOK and never logged in: 'Please use /login to sign in to use Copilot' above the "
        "input.",
    "login_required__fake_token_unvalidated":
        "A classic PAT (ghp_) in COPILOT_GITHUB_TOKEN is rejected locally: '! Classic Personal "
        "Access Tokens (ghp_) are not supported…' and 'Please use /login'.",
    "picker__trust_folder":
        "First start in a folder not in ~/.copilot/config.json trustedFolders.",
    "question__ask_user_form":
        "Stand-in called ask_user with a requestedSchema (one enum field).",
    "picker__subagent_configuration":
        "Typed /model + Enter in BYOK mode; what opened was the Subagent Configuration table "
        "(per-subagent models), not a model list.",
}


SCENARIOS: list[tuple[str, Callable[[Copilot], None]]] = []


def scenario(name: str) -> Callable[[Callable[[Copilot], None]], Callable[[Copilot], None]]:
    def deco(fn: Callable[[Copilot], None]) -> Callable[[Copilot], None]:
        SCENARIOS.append((name, fn))
        return fn
    return deco


@scenario("trust")
def trust(cp: Copilot) -> None:
    for w, h in ((120, 40), (80, 24)):
        fresh = cp.s.workdir(f"untrusted-{w}")
        pane = cp.launch(cwd=fresh, ready=TRUST, width=w, height=h)
        size = "" if w == 120 else f"_{w}x{h}"
        cp.s.shot(pane, "picker", f"trust_folder{size}", "first start in an untrusted folder",
                  evidence="Confirm folder trust")
        cp.s.close(pane)


@scenario("login")
def login(cp: Copilot) -> None:
    pane = cp.launch(env=cp.path_env)
    cp.s.wait(pane, "/login")
    time.sleep(1)
    cp.s.shot(pane, "login_required", "please_use_login", "no BYOK, never logged in",
              evidence="Please use /login")
    cp.s.type(pane, "refactor the parser")
    time.sleep(0.8)
    cp.s.shot(pane, "login_required", "please_use_login_with_draft",
              "no BYOK, text typed in the input", notes="Input holds a draft but the line "
              "above still says to /login; login wins.")
    cp.s.keys(pane, "C-u")
    cp.send(pane, "/login")
    cp.s.wait(pane, "What account do you want to log into?")
    time.sleep(0.8)
    cp.s.shot(pane, "login_required", "login_account_picker", "typed /login")
    cp.s.keys(pane, "Enter")
    cp.s.wait(pane, "How do you want to sign in?")
    time.sleep(0.8)
    cp.s.shot(pane, "login_required", "login_method_picker", "/login -> GitHub.com")
    cp.s.keys(pane, "Down")
    time.sleep(0.3)
    cp.s.keys(pane, "Enter")
    cp.s.wait(pane, "Press any key to retry", timeout=60)
    time.sleep(0.5)
    cp.s.shot(pane, "login_required", "device_code_failed_offline",
              "/login -> device code, github.com unreachable")
    cp.s.keys(pane, "Escape")
    time.sleep(1)
    cp.send(pane, "/login")
    cp.s.wait(pane, "What account do you want to log into?")
    cp.s.keys(pane, "Enter")
    cp.s.wait(pane, "How do you want to sign in?")
    time.sleep(0.5)
    cp.s.keys(pane, "Enter")
    cp.s.wait(pane, "Waiting for authorization", timeout=30)
    time.sleep(0.5)
    cp.s.shot(pane, "login_required", "browser_waiting_for_authorization",
              "/login -> browser sign-in (no browser here)")
    cp.s.close(pane)
    pane = cp.launch(env=cp.path_env, width=80, height=24)
    cp.s.wait(pane, "/login")
    time.sleep(1)
    cp.s.shot(pane, "login_required", "please_use_login_80x24", "no BYOK, 80x24")
    cp.s.close(pane)
    env = {**cp.path_env, "COPILOT_GITHUB_TOKEN": "ghp_fake000000000000000000000000000000"}
    pane = cp.launch(env=env)
    time.sleep(6)
    cp.s.shot(pane, "login_required", "fake_token_unvalidated",
              "COPILOT_GITHUB_TOKEN set to a fake token, github.com unreachable")
    cp.s.close(pane)


@scenario("idle")
def idle(cp: Copilot) -> None:
    for w, h in ((120, 40), (80, 24)):
        pane = cp.launch(width=w, height=h)
        screen = cp.s.settle(pane)
        size = "" if w == 120 else f"_{w}x{h}"
        cp.s.shot(pane, "idle", f"empty_prompt{size}", "fresh start (BYOK stand-in)",
                  screen=screen, evidence="/ commands")
        if w == 120:
            cp.s.type(pane, "refactor the parser so it accepts tabs")
            time.sleep(1.0)
            cp.s.shot(pane, "draft", "typed", "typed, not sent")
            for line in ("and also", "keep the old tests passing"):
                cp.s.keys(pane, "C-j")
                cp.s.type(pane, line)
            time.sleep(1.0)
            cp.s.shot(pane, "draft", "multiline", "three lines typed (ctrl+j newlines)")
        cp.s.close(pane)


@scenario("session")
def session_screens(cp: Copilot) -> None:
    pane = cp.launch()
    cp.send(pane, "say hello")
    cp.s.wait(pane, "Nothing to do here.")
    cp.idle_again(pane)
    screen = cp.s.settle(pane)
    cp.s.shot(pane, "idle", "after_reply", "after a normal stand-in reply", screen=screen)
    cp.send(pane, "stream slowly [[slow]]")
    cp.s.wait(pane, "step3")
    cp.s.shot(pane, "busy", "streaming", "stand-in streaming a reply word by word")
    cp.s.wait(pane, "step80", timeout=90)
    cp.idle_again(pane)
    cp.send(pane, "write a retry helper [[code429]]")
    cp.s.wait(pane, "caller can back off")
    cp.idle_again(pane)
    screen = cp.s.settle(pane)
    cp.s.shot(pane, "idle", "transcript_mentions_429", "stand-in replied with code about 429",
              screen=screen, hard_negative=True)
    cp.s.close(pane)
    pane = cp.launch()
    cp.send(pane, "write a retry helper, slowly [[code429slow]]")
    cp.s.wait(pane, "usage limit", timeout=60)
    cp.s.shot(pane, "busy", "streaming_code_mentions_429", "stand-in streaming code about 429",
              hard_negative=True)
    cp.s.close(pane)
    pane = cp.launch(width=80, height=24)
    cp.send(pane, "stream slowly [[slow]]")
    cp.s.wait(pane, "step3")
    cp.s.shot(pane, "busy", "streaming_80x24", "stand-in streaming, 80x24")
    cp.s.close(pane)
    pane = cp.launch()
    cp.send(pane, "wait for it [[stall0]]")
    time.sleep(4)
    cp.s.shot(pane, "busy", "waiting_for_first_token", "stand-in accepted, sends nothing")
    cp.s.close(pane)


@scenario("question")
def question(cp: Copilot) -> None:
    for w, h in ((120, 40), (80, 24)):
        pane = cp.launch(width=w, height=h)
        cp.send(pane, "write the marker [[tool]]")
        cp.s.wait(pane, "Do you want to run this command?")
        time.sleep(0.8)
        size = "" if w == 120 else f"_{w}x{h}"
        cp.s.shot(pane, "question", f"permission_shell{size}", "stand-in called the bash tool",
                  evidence="Do you want to run this command?")
        cp.s.close(pane)
    pane = cp.launch()
    cp.send(pane, "which database? [[toolq]]")
    cp.s.wait(pane, "Copilot needs information")
    time.sleep(0.8)
    cp.s.shot(pane, "question", "ask_user_form", "stand-in called the ask_user tool")
    cp.s.close(pane)


def _fail(cp: Copilot, mode: str, state: str, slug: str, how: str,
          needle: str | re.Pattern[str] | None = None, at: float = 0.0,
          timeout: float = 300, env: dict[str, str] | None = None, **extra: Any) -> None:
    """Send a message the stand-in fails with `mode`; shot at `needle` or when idle again."""
    pane = cp.launch(env=env)
    cp.send(pane, f"do the thing [[{mode}]]")
    start = time.monotonic()
    if at:
        time.sleep(at)
        cp.s.shot(pane, state, slug, f"{how}; {int(at)} s in", **extra)
        cp.s.close(pane)
        return
    try:
        if needle is not None:
            screen = cp.s.wait(pane, needle, timeout=timeout)
        else:
            time.sleep(2)
            screen = cp.idle_again(pane, timeout=timeout)
    except TimeoutError:
        cp.s.shot(pane, "busy", f"{slug}_still_busy", f"{how}; still busy at {int(timeout)} s")
        cp.s.close(pane)
        return
    took = int(time.monotonic() - start)
    reset = re.search(r"resets at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)", screen)
    if reset:
        extra["reset_at"] = reset.group(1).replace("Z", "+00:00")
    note = str(extra.pop("notes", ""))
    cp.s.shot(pane, state, slug, how, screen=screen,
              notes=(note + f" Shown {took}s after sending.").strip(), **extra)
    cp.s.close(pane)


@scenario("rate_limit")
def rate_limit(cp: Copilot) -> None:
    _fail(cp, "429ra", "busy", "429_retry_after_5s", "stand-in answers 429 + retry-after: 7",
          at=5)
    _fail(cp, "429ra", "rate_limit", "429_retry_after_final",
          "stand-in answers every request with 429 + retry-after: 7")
    _fail(cp, "429", "rate_limit", "429_no_headers_final",
          "stand-in answers every request with 429, no headers")
    _fail(cp, "429reset", "rate_limit", "429_reset_in_1h",
          "stand-in answers 429 + retry-after: 3600 + x-ratelimit-reset headers")
    _fail(cp, "429quota", "rate_limit", "insufficient_quota",
          "stand-in answers 429 insufficient_quota")


@scenario("errors")
def errors(cp: Copilot) -> None:
    _fail(cp, "401", "login_required", "byok_invalid_api_key", "stand-in answers 401")
    _fail(cp, "500", "connection_lost", "http_500_final", "stand-in answers 500")
    _fail(cp, "503", "connection_lost", "http_503_overloaded_final", "stand-in answers 503")
    _fail(cp, "drop", "connection_lost", "stream_dropped", "stand-in drops the socket mid-stream")
    env = {**cp.path_env, **cp.byok("http://127.0.0.1:9/v1")}
    _fail(cp, "normal", "connection_lost", "connection_refused_final",
          "BYOK base URL on a closed port (127.0.0.1:9)", env=env)
    _fail(cp, "stall", "busy", "stalled_stream", "stand-in sent one chunk then nothing",
          at=60, notes="A stall with no error: still the busy indicator after 60 s.")


@scenario("pickers")
def pickers(cp: Copilot) -> None:
    pane = cp.launch()
    cp.send(pane, "say hello")
    cp.s.wait(pane, "Nothing to do here.")
    cp.idle_again(pane)
    for cmd, slug in (("/model", "subagent_configuration"), ("/resume", "session_picker"),
                      ("/theme", "theme_picker")):
        cp.send(pane, cmd)
        time.sleep(2.5)
        cp.s.shot(pane, "picker", slug, f"typed {cmd}")
        cp.s.keys(pane, "Escape")
        time.sleep(1.0)
    cp.s.close(pane)


@scenario("exit")
def exits(cp: Copilot) -> None:
    pane = cp.launch()
    cp.send(pane, "say hello")
    cp.s.wait(pane, "Nothing to do here.")
    cp.idle_again(pane)
    cp.send(pane, "/exit")
    cp.s.wait(pane, "user@host:")
    time.sleep(0.5)
    cp.s.type(pane, "echo exit=$?", enter=True)
    time.sleep(0.8)
    cp.s.shot(pane, "crashed", "after_exit_shell_prompt", "/exit, back at the shell prompt",
              notes="Normal exit. Copilot prints a summary with 'Resume  copilot --resume=<uuid>'.")
    cp.s.close(pane)
    pane = cp.launch()
    cp.s.keys(pane, "C-c")
    time.sleep(0.8)
    cp.s.shot(pane, "idle", "ctrl_c_once_hint", "one Ctrl-C at the empty prompt")
    cp.s.keys(pane, "C-c")
    try:
        cp.s.wait(pane, "user@host:", timeout=10)
        time.sleep(0.5)
        cp.s.type(pane, "echo exit=$?", enter=True)
        time.sleep(0.8)
        cp.s.shot(pane, "crashed", "after_ctrl_c_twice_shell_prompt", "Ctrl-C twice")
    except TimeoutError:
        print("  Ctrl-C twice did not exit")
    cp.s.close(pane)
    pane = cp.launch()
    cp.send(pane, "stream slowly [[slow]]")
    cp.s.wait(pane, "step3")
    pid = cp.s.agent_pid(pane, ("copilot",))
    assert pid
    kill_tree(pid)
    cp.s.wait(pane, "user@host:")
    time.sleep(0.8)
    cp.s.shot(pane, "crashed", "after_kill9_shell_prompt",
              "kill -9 of the copilot process tree while busy; bash prompt is back")
    cp.s.close(pane)
    pane = cp.s.start(f"{cp.bin}", cp.proj, cp.env, shell=False)
    cp.s.wait(pane, PROMPT_FOOTER, timeout=60)
    time.sleep(1)
    kill_tree(cp.s.tmux.pane_pid(pane))
    status = cp.s.dead_status(pane)
    time.sleep(0.5)
    cp.s.shot(pane, "crashed", "pane_dead_kill9", "copilot as the pane command, SIGKILLed",
              notes=f"tmux pane_dead_status={status!r}.")
    cp.s.close(pane)


@scenario("exit_codes")
def exit_codes(cp: Copilot) -> None:
    for slug, steps in (("pane_dead_after_exit_command", ["text:/exit", "sleep:1", "Enter"]),
                        ("pane_dead_after_ctrl_c_twice", ["C-c", "sleep:1", "C-c"])):
        print("  ", slug, exit_probe(cp.s, cp.bin, cp.proj, cp.env, PROMPT_FOOTER, steps,
                                     slug=slug))


@scenario("upgrade")
def upgrade(cp: Copilot) -> None:
    env = {**cp.env, "COPILOT_CLI_VERSION": "1.0.1"}
    env.pop("COPILOT_AUTO_UPDATE")
    pane = cp.launch(env=env)
    try:
        cp.s.wait(pane, re.compile(r"[Uu]pdate|[Uu]pgrade|new version"), timeout=30)
        time.sleep(1)
        cp.s.shot(pane, "idle", "update_notice", "COPILOT_CLI_VERSION=1.0.1 (pretend old)")
    except TimeoutError:
        print("  no update notice")
    cp.s.close(pane)


def _run(cp: Copilot, args: list[str], cwd: Path, env: dict[str, str] | None = None,
         stdin: str | None = None, timeout: float = 300) -> dict[str, object]:
    full = {**os.environ, **cp.s.base_env(), **cp.env, **(env or {})}
    full["PWD"] = str(cwd)  # opencode takes its directory from $PWD, not getcwd()
    start = time.monotonic()
    rc: int | str
    try:
        proc = subprocess.run([cp.bin, *args], cwd=cwd, env=full, capture_output=True,
                              text=True, input=stdin if stdin is not None else "",
                              timeout=timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = "timeout", str(exc.stdout or ""), str(exc.stderr or "")
    home = str(cp.s.home)
    return {"argv": ["copilot", *args], "cwd": str(cwd).replace(home, "~"), "rc": rc,
            "secs": round(time.monotonic() - start), "stdout": out.replace(home, "~")[-1500:],
            "stderr": err.replace(home, "~")[-1500:]}


def _workspaces(cp: Copilot) -> list[dict[str, str]]:
    """Every ~/.copilot/session-state/<uuid>/workspace.yaml as a flat dict."""
    rows = []
    for path in sorted((cp.s.home / ".copilot" / "session-state").glob("*/workspace.yaml")):
        row = {}
        for line in path.read_text().splitlines():
            if ": " in line and not line.startswith(" "):
                key, value = line.split(": ", 1)
                row[key] = value
        rows.append(row)
    return rows


def newest_session_for(cp: Copilot, cwd: Path) -> str | None:
    """The mapping a supervisor needs: newest workspace.yaml whose cwd is `cwd`."""
    rows = [r for r in _workspaces(cp) if r.get("cwd") == str(cwd)]
    rows.sort(key=lambda r: r.get("updated_at", ""))
    return rows[-1]["id"] if rows else None


@scenario("extras")
def extras(cp: Copilot) -> None:
    """Process tree, session files, resume, headless and hook facts, --help text."""
    import capkit
    from capkit_b import run_help

    facts: dict[str, object] = {"version": cp.version}
    home = str(cp.s.home)
    odd = cp.s.workdir("resume dir_with.dot")
    other = cp.s.workdir("other")
    cp.trust(cp.proj, odd, other)
    pane = cp.launch()
    cp.send(pane, "stream slowly [[slow]]")
    cp.s.wait(pane, "step3")
    rows = capkit.process_tree(cp.s.tmux.pane_pid(pane))
    for row in rows:
        row["cmdline"] = [str(a).replace(home, "~") for a in row["cmdline"]]  # type: ignore
    capkit.save_processes(PROVIDER, rows, f"copilot {cp.version} busy in a tmux pane started "
                          "from bash: node runs npm-loader.js (bin/copilot), which spawnSync()s "
                          "the native binary @github/copilot-linux-x64/copilot; the native "
                          "process's name (comm) is 'MainThread'. Captured by "
                          "capture_copilot.py.")
    state = json.loads((cp.s.home / ".copilot" / "open-sessions-state.json").read_text())
    facts["open_sessions_state_while_busy"] = state
    cp.s.close(pane)
    facts["headless"] = _run(cp, ["-p", "say hello", "--model", "gpt-4.1"], odd)
    sid = newest_session_for(cp, odd)
    facts["session_id_in_known_cwd"] = sid
    facts["workspaces"] = _workspaces(cp)
    facts["headless_silent"] = _run(cp, ["-p", "say hello", "--model", "gpt-4.1", "-s"], odd)
    facts["headless_stdin"] = _run(cp, ["--model", "gpt-4.1", "-s"], odd, stdin="hello on stdin")
    facts["headless_tool_default"] = _run(cp, ["-p", "mark [[tool]]", "--model", "gpt-4.1"], odd)
    facts["headless_tool_readonly"] = _run(cp, ["-p", "mark [[tool]]", "--model", "gpt-4.1",
                                                "--available-tools", "view", "grep", "glob",
                                                "--no-ask-user"], odd)
    facts["headless_wrote_file"] = (odd / "pitcrew-standin.txt").exists()
    facts["headless_401"] = _run(cp, ["-p", "x [[401]]", "--model", "gpt-4.1"], odd)
    facts["headless_429"] = _run(cp, ["-p", "x [[429]]", "--model", "gpt-4.1"], odd)
    facts["headless_no_auth"] = _run(cp, ["-p", "hi"], odd, env={"COPILOT_PROVIDER_BASE_URL": ""})
    facts["resume_by_id_other_dir"] = _run(cp, ["-p", "again", f"--resume={sid}",
                                                "--model", "gpt-4.1"], other)
    facts["resume_prefix"] = _run(cp, ["-p", "again", f"--resume={str(sid)[:8]}",
                                       "--model", "gpt-4.1"], odd)
    facts["continue_other_dir"] = _run(cp, ["-p", "again", "--continue", "--model", "gpt-4.1"],
                                       other)
    facts["resume_bogus"] = _run(cp, ["-p", "again", "--resume=00000000-0000-4000-8000-00000000"
                                      "0000", "--model", "gpt-4.1"], odd)
    facts["workspaces_after"] = _workspaces(cp)
    pane = cp.launch(f"--resume={sid}", cwd=other)
    time.sleep(2)
    cp.s.shot(pane, "idle", "resumed_by_id", "`copilot --resume=<id>` from another cwd, offline")
    cp.s.close(pane)
    pane = cp.s.start("copilot --resume", odd, cp.env)
    time.sleep(8)
    cp.s.shot(pane, "picker", "resume_picker", "`copilot --resume` with no id")
    cp.s.close(pane)
    # hooks (user-level, ~/.copilot/settings.json "hooks"), payload of every event
    dump = cp.s.home / "hooks.jsonl"
    script = cp.s.home / "hook.sh"
    script.write_text(f'#!/bin/sh\n{{ printf \'%s \' "$1"; cat; echo; }} >> {dump}\n')
    script.chmod(0o755)
    events = ["sessionStart", "sessionEnd", "userPromptSubmitted", "preToolUse", "postToolUse",
              "errorOccurred", "agentStop", "subagentStop", "notification", "permissionRequest"]
    settings = cp.s.home / ".copilot" / "settings.json"
    settings.write_text(json.dumps({"hooks": {e: [{"type": "command", "bash": f"{script} {e}",
                                                    "timeoutSec": 10}] for e in events}}))
    try:
        pane = cp.launch(cwd=odd)
        cp.send(pane, "write the marker [[tool]]")
        cp.s.wait(pane, "Do you want to run this command?")
        time.sleep(3)
        cp.s.keys(pane, "Enter")
        cp.s.wait(pane, "marker file is written")
        cp.idle_again(pane)
        cp.send(pane, "/exit")
        cp.s.wait(pane, "user@host:")
        cp.s.close(pane)
        facts["hooks_headless_401"] = _run(cp, ["-p", "x [[401]]", "--model", "gpt-4.1"], odd)
    finally:
        settings.unlink()
    dest = capkit.FIXTURES / "sessions" / PROVIDER
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    if dump.exists():
        (dest / "hook-payloads.txt").write_text(dump.read_text().replace(home, "/home/user"))
    state_dir = cp.s.home / ".copilot" / "session-state" / str(sid)
    for path in sorted(state_dir.rglob("*")):
        if path.is_file() and not path.name.startswith("inuse."):
            target = dest / path.relative_to(cp.s.home)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(errors="replace").replace(home, "/home/user")
            if path.name == "events.jsonl":  # drop the ~30 KB system prompt, keep the shape
                lines = []
                for line in text.splitlines():
                    event = json.loads(line)
                    if event.get("type") == "system.message":
                        event["data"]["content"] = "<system prompt elided by capture_copilot.py>"
                    lines.append(json.dumps(event))
                text = "\n".join(lines) + "\n"
            target.write_text(text)
    for name in ("config.json", "open-sessions-state.json"):
        src = cp.s.home / ".copilot" / name
        if src.exists():
            (dest / ".copilot").mkdir(exist_ok=True)
            (dest / ".copilot" / name).write_text(src.read_text().replace(home, "/home/user"))
    db = cp.s.home / ".copilot" / "session-store.db"
    if db.exists():
        schema = subprocess.run(["sqlite3", str(db), ".schema"], capture_output=True,
                                text=True).stdout
        (dest / "session-store.db.schema.sql").write_text(schema)
        facts["session_store_sessions"] = subprocess.run(
            ["sqlite3", "-json", str(db), "SELECT id, cwd, created_at, updated_at FROM sessions"],
            capture_output=True, text=True).stdout.replace(home, "~")
    facts["home_placeholder"] = "~ = the capture's throwaway HOME; /home/user in copied files"
    (dest / "facts.json").write_text(json.dumps(facts, indent=2, default=str) + "\n")
    env = {**os.environ, **cp.s.base_env(), **cp.env}
    text = run_help(cp.bin, [["--version"], ["--help"], ["help", "commands"],
                             ["sessions", "--help"], ["help", "limits"], ["help", "providers"],
                             ["help", "environment"], ["help", "config"]], env)
    (capkit.FIXTURES / "cli-help").mkdir(exist_ok=True)
    (capkit.FIXTURES / "cli-help" / "copilot.txt").write_text(text.replace(home, "~"))
    print(json.dumps({k: (v if not isinstance(v, dict) or "rc" not in v else
                          {"rc": v["rc"], "secs": v["secs"]}) for k, v in facts.items()
                      if k not in ("workspaces", "workspaces_after")}, indent=1,
                     default=str)[:6000])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=[])
    args = parser.parse_args()
    cp = Copilot([])
    print(f"copilot {cp.version}, HOME={cp.s.home}, stand-in {cp.s.server.base_url}", flush=True)
    try:
        for name, fn in SCENARIOS:
            if args.only and not any(o in name for o in args.only):
                continue
            print(f"- {name}", flush=True)
            try:
                fn(cp)
            except Exception as exc:
                print(f"  FAILED {name}: {exc}", flush=True)
    finally:
        cp.s.finish()
        if not os.environ.get("KEEP_HOME"):
            shutil.rmtree(cp.s.home, ignore_errors=True)


if __name__ == "__main__":
    main()
