"""Capture real Qwen Code (npm `@qwen-code/qwen-code`) screens into tests/fixtures/screens/qwen/.

Qwen Code talks to the local stand-in (standin_openai_chat.py) as an OpenAI-compatible
provider: ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` in the environment plus
``security.auth.selectedType = "openai"`` in a throwaway ``~/.qwen/settings.json``. Every
scenario starts a fresh qwen in its own tmux pane (inside ``bash --norc``), drives it with
send-keys and saves the pane with capkit.save_screen.

Usage::

    /work/main/.venv/bin/python tests/capture/capture_qwen.py                 # 0.15.x, all
    /work/main/.venv/bin/python tests/capture/capture_qwen.py --latest        # current latest
    /work/main/.venv/bin/python tests/capture/capture_qwen.py --only idle rate_limit_final

Without QWEN_BIN the CLI is installed (once) with ``npm install --prefix
$PITCREW_REALCLI/qwen @qwen-code/qwen-code`` (npm picks the newest release that supports the
running node; ``--latest`` uses ``$PITCREW_REALCLI/qwen-latest`` and ``@latest``).
PITCREW_REALCLI defaults to /tmp/realcli2. It always runs with a throwaway HOME,
DISABLE_AUTOUPDATER=1 and a throwaway NPM_CONFIG_PREFIX: Qwen Code *does* update itself with
``npm install -g @qwen-code/qwen-code@latest`` on start unless ``general.enableAutoUpdate`` is
false, and the ``update`` scenario lets it do so into that throwaway prefix. Fixtures from
``--latest`` get a ``_v<major>_<minor>`` suffix. ``--only`` takes substrings of scenario names;
``rate_limit_final`` waits up to 15 minutes, so run it on its own.
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

import contextlib

from capkit_b import Needle, Session, ensure_installed, exit_probe, kill_tree

PROVIDER = "qwen"
READY = "Type your message"
BUSY = re.compile(r"\(\d+[ms][^)]*esc to cancel\)")
AUTH_PICKER = re.compile(r"Select Authentication Method|Connect a Provider")


class Qwen:
    def __init__(self, latest: bool, only: list[str]) -> None:
        binary = os.environ.get("QWEN_BIN")
        if not binary:
            name, pkg = (("qwen-latest", "@qwen-code/qwen-code@latest") if latest
                         else ("qwen", "@qwen-code/qwen-code"))
            binary = str(ensure_installed(name, pkg) / "qwen")
        self.bin = binary
        self.version = subprocess.run([binary, "--version"], capture_output=True,
                                      text=True).stdout.strip()
        major, minor = self.version.split(".")[:2]
        self.suffix = f"_v{major}_{minor}" if latest else ""
        self.s = Session(PROVIDER, self.version, "capture_qwen.py", out_filter=only,
                         notes=NOTES)
        self.proj = self.s.workdir("qw-proj")
        self.write_settings()
        self.env = {"PATH": f"{Path(binary).parent}:{os.environ.get('PATH', '')}",
                    "OPENAI_API_KEY": "sk-fake-standin-0000",
                    "OPENAI_BASE_URL": self.s.server.base_url}

    def write_settings(self, auth: bool = True, auto_update: bool = False) -> None:
        settings: dict[str, object] = {"general": {"enableAutoUpdate": auto_update}}
        if auth:
            settings["security"] = {"auth": {"selectedType": "openai"}}
            settings["model"] = {"name": "standin-model"}
        path = self.s.home / ".qwen" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings, indent=2))

    def launch(self, args: str = "", env: dict[str, str] | None = None, cwd: Path | None = None,
               width: int = 120, height: int = 40, ready: Needle = READY) -> str:
        pane = self.s.start(f"qwen {args}".strip(), cwd or self.proj, env or self.env,
                            width=width, height=height)
        self.s.wait(pane, ready, timeout=60)
        time.sleep(1.0)
        return pane

    def send(self, pane: str, text: str) -> None:
        """Type, pause (a fast Enter counts as part of a paste: it inserts a newline), Enter."""
        self.s.type(pane, text)
        time.sleep(0.8)
        self.s.keys(pane, "Enter")

    def until_idle(self, pane: str, timeout: float) -> str:
        """Wait for the spinner to show up and then to go away again."""
        self.s.wait(pane, BUSY, timeout=30)
        return self.s.wait(pane, READY, absent=BUSY, timeout=timeout)

    def shot(self, pane: str, state: str, slug: str, how: str, **extra: Any) -> None:
        self.s.shot(pane, state, slug + self.suffix, how, **extra)


# Default notes for fixtures whose scenario passes none (what to know when reading them).
NOTES: dict[str, str] = {
    "question__permission_shell_v0_24":
        "qwen 0.24 starts in Auto mode: an LLM classifier judges tool calls. The classifier "
        "request to the stand-in did not yield a verdict, so it says 'Classifier stage 1 "
        "unavailable' and asks. The spinner line 'Waiting for user confirmation...' stays under"
        " the menu.",
    "question__ask_user_question_v0_24":
        "qwen 0.24 offers AskUserQuestion interactively (0.15.10 offers ask_user_question only "
        "in headless mode). Spinner 'Waiting for user confirmation...' stays under the "
        "question.",
    "idle__empty_prompt_v0_24":
        "0.24.4 shows the 'Ripgrep not available … EACCES' box because npm 11 skipped the "
        "package's install scripts (vendor rg not executable), plus 'Auto mode enabled' and "
        "'Extensions changed on disk'. Footer '➜ qw-proj · standin-model' / 'Auto mode (shift +"
        " tab to cycle)'.",
    "idle__ctrl_c_once_hint":
        "'Press Ctrl+C again to exit.' replaces '? for shortcuts'; still idle.",
    "login_required__auth_after_escape":
        "Escape in the auth dialog: 'You must select an auth method to proceed. Press Ctrl+C "
        "again to exit.'",
    "login_required__openai_auth_without_key_80x24":
        "security.auth.selectedType=openai but no OPENAI_API_KEY: 'Failed to login. Message: "
        "Missing API key for openai auth…' inside the auth dialog.",
    "picker__model_picker":
        "/model; the list includes '[qwen-oauth] coder-model (Discontinued)'.",
}


SCENARIOS: list[tuple[str, Callable[[Qwen], None]]] = []


def scenario(name: str) -> Callable[[Callable[[Qwen], None]], Callable[[Qwen], None]]:
    def deco(fn: Callable[[Qwen], None]) -> Callable[[Qwen], None]:
        SCENARIOS.append((name, fn))
        return fn
    return deco


@scenario("auth")
def auth(q: Qwen) -> None:
    q.write_settings(auth=False)
    try:
        _auth(q)
    finally:
        q.write_settings(auth=True)


def _auth(q: Qwen) -> None:
    env = {"PATH": q.env["PATH"]}
    pane = q.launch(env=env, ready=AUTH_PICKER)
    q.s.settle(pane)
    q.shot(pane, "login_required", "auth_picker_first_run", "first run, no auth configured")
    q.s.keys(pane, "Up")  # wraps to the last entry, "Custom Provider"
    time.sleep(0.5)
    q.s.keys(pane, "Enter")
    time.sleep(2.0)
    q.shot(pane, "login_required", "auth_custom_provider", "auth picker -> Custom Provider")
    q.s.keys(pane, "Escape")
    time.sleep(1.0)
    q.s.keys(pane, "Escape")
    time.sleep(1.0)
    q.shot(pane, "login_required", "auth_after_escape", "Escape out of the auth dialog")
    q.s.close(pane)
    q.write_settings(auth=True)
    pane = q.launch(width=80, height=24, env=env, ready="Failed to login")
    q.s.settle(pane)
    q.shot(pane, "login_required", "openai_auth_without_key_80x24",
           "selectedType=openai in settings but no OPENAI_API_KEY")
    q.s.close(pane)


@scenario("idle")
def idle(q: Qwen) -> None:
    for w, h in ((120, 40), (80, 24)):
        pane = q.launch(width=w, height=h)
        q.s.settle(pane)
        size = "" if w == 120 else f"_{w}x{h}"
        q.shot(pane, "idle", f"empty_prompt{size}", "fresh start, API key from the environment",
               evidence="Type your message",
               notes="'>   Type your message or @path/to/file' is the dim placeholder of the "
                     "empty input box.")
        if w == 120:
            q.s.type(pane, "refactor the parser so it accepts tabs")
            time.sleep(1.0)
            q.shot(pane, "draft", "typed", "typed, not sent")
            for line in ("and also", "keep the old tests passing"):
                q.s.keys(pane, "C-j")
                q.s.type(pane, line)
            time.sleep(1.0)
            q.shot(pane, "draft", "multiline", "three lines typed (ctrl+j newlines)")
        q.s.close(pane)


@scenario("session")
def session_screens(q: Qwen) -> None:
    pane = q.launch()
    q.send(pane, "say hello")
    q.s.wait(pane, "Nothing to do here.", absent=BUSY)
    q.s.settle(pane)
    q.shot(pane, "idle", "after_reply", "after a normal stand-in reply")
    q.send(pane, "stream slowly [[slow]]")
    q.s.wait(pane, "step3")
    q.s.wait(pane, BUSY)
    q.shot(pane, "busy", "streaming", "stand-in streaming a reply word by word",
           evidence="esc to cancel")
    q.s.wait(pane, "step80", timeout=90)
    q.s.wait(pane, READY, absent=BUSY)
    q.send(pane, "write a retry helper [[code429]]")
    q.s.wait(pane, "caller can back off")
    q.s.settle(pane)
    q.shot(pane, "idle", "transcript_mentions_429", "stand-in replied with code about 429",
           hard_negative=True,
           notes="Transcript quotes '429 Too Many Requests' and 'rate limit' in code and a "
                 "diff; qwen itself is idle.")
    q.s.close(pane)
    pane = q.launch()
    q.send(pane, "write a retry helper, slowly [[code429slow]]")
    q.s.wait(pane, "usage limit", timeout=60)
    q.s.wait(pane, BUSY)
    q.shot(pane, "busy", "streaming_code_mentions_429", "stand-in streaming code about 429",
           hard_negative=True)
    q.s.close(pane)
    pane = q.launch(width=80, height=24)
    q.send(pane, "stream slowly [[slow]]")
    q.s.wait(pane, "step3")
    q.shot(pane, "busy", "streaming_80x24", "stand-in streaming, 80x24")
    q.s.close(pane)
    pane = q.launch()
    q.s.type(pane, "pasted line one")
    q.s.keys(pane, "Enter")  # right after the text: qwen treats it as part of a paste
    time.sleep(1.0)
    q.shot(pane, "draft", "fast_enter_after_paste",
           "text + Enter sent together by tmux send-keys",
           notes="Enter that arrives right after typed text is taken as a pasted newline: the "
                 "message is NOT sent, the box holds a second (empty) line.")
    q.s.close(pane)


@scenario("question")
def question(q: Qwen) -> None:
    for w, h in ((120, 40), (80, 24)):
        pane = q.launch(width=w, height=h)
        q.send(pane, "write the marker [[tool]]")
        q.s.wait(pane, "Yes, allow once")
        time.sleep(0.8)
        size = "" if w == 120 else f"_{w}x{h}"
        q.shot(pane, "question", f"permission_shell{size}",
               "stand-in called run_shell_command", evidence="Allow execution")
        q.s.close(pane)
    pane = q.launch()
    q.send(pane, "which database? [[toolq]]")
    try:
        q.s.wait(pane, re.compile(r"PostgreSQL|SQLite"), timeout=20)
        time.sleep(0.8)
        q.shot(pane, "question", "ask_user_question", "stand-in called the ask-user tool")
    except TimeoutError:
        print("  no ask-user tool in this version")
    q.s.close(pane)


def _error_shot(q: Qwen, mode: str, state: str, slug: str, needle: str | re.Pattern[str],
                how: str, wait: float = 60, after: float = 0.5, **extra: object) -> str:
    pane = q.launch()
    q.send(pane, f"do the thing [[{mode}]]")
    screen = q.s.wait(pane, needle, timeout=wait)
    time.sleep(after)
    q.shot(pane, state, slug, how, **extra)
    return screen


@scenario("rate_limit_busy")
def rate_limit_busy(q: Qwen) -> None:
    for mode, slug in (("429ra", "429_retry_after_hidden"), ("429", "429_no_headers_hidden")):
        pane = q.launch()
        q.send(pane, f"do the thing [[{mode}]]")
        q.s.wait(pane, BUSY)
        time.sleep(20)
        q.shot(pane, "busy", f"{slug}_20s", f"stand-in answers every request with {mode}; 20 s in",
               notes="Qwen retries HTTP 429 silently: only the spinner shows, nothing on screen "
                     "says rate limit. A person would call it busy.")
        q.s.close(pane)


@scenario("rate_limit_final")
def rate_limit_final(q: Qwen) -> None:
    """Qwen first retries silently for minutes, then prints '↻ Retrying in Ns… (attempt k/10)'.

    The modes run side by side (one pane each) because each takes 4-15 minutes.
    """
    modes = (("429ra", "429_retry_after_visible_retry"), ("429", "429_no_headers_visible_retry"),
             ("429quota", "insufficient_quota_visible_retry"),
             ("429reset", "429_reset_header_visible_retry"),
             ("503", "http_503_visible_retry"))
    panes = {}
    for mode, slug in modes:
        pane = q.launch()
        q.send(pane, f"do the thing [[{mode}]]")
        panes[pane] = (mode, slug, time.monotonic())
    deadline = time.monotonic() + 1200
    while panes and time.monotonic() < deadline:
        for pane, (mode, slug, start) in list(panes.items()):
            screen = q.s.tmux.capture(pane)
            found = VISIBLE_RETRY.search(screen)
            if found:
                state = "connection_lost" if mode == "503" else "rate_limit"
                reset = RESETS_AT.search(screen)
                extra = {"reset_at": reset.group(1).replace("Z", "+00:00")} if reset else {}
                q.shot(pane, state, slug, f"stand-in answers every request with {mode}",
                       screen=screen, retry_after=int(found.group(1)),
                       evidence="Retrying in",
                       notes=f"First visible retry line {int(time.monotonic() - start)}s after "
                             "sending; before that only the spinner showed.", **extra)
                q.s.close(pane)
                del panes[pane]
        time.sleep(2)
    for pane, (mode, slug, _start) in panes.items():
        q.shot(pane, "busy", f"{slug}_none_in_20min", f"{mode}: no visible retry in 20 min")
        q.s.close(pane)


VISIBLE_RETRY = re.compile(r"↻ Retrying in (\d+) seconds")
RESETS_AT = re.compile(r"resets at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")


def _retry_or_idle(q: Qwen, pane: str, timeout: float) -> tuple[str, str, int]:
    """Wait for qwen's visible retry line or for the prompt to be idle again."""
    start = time.monotonic()
    q.s.wait(pane, BUSY, timeout=30)
    deadline = start + timeout
    while time.monotonic() < deadline:
        screen = q.s.tmux.capture(pane)
        if VISIBLE_RETRY.search(screen):
            return "retry", screen, int(time.monotonic() - start)
        if READY in screen and not BUSY.search(screen):
            return "idle", screen, int(time.monotonic() - start)
        time.sleep(1)
    return "timeout", q.s.tmux.capture(pane), int(timeout)


@scenario("errors")
def errors(q: Qwen) -> None:
    for mode, state, slug, env in (
            ("401", "login_required", "invalid_api_key", None),
            ("500", "connection_lost", "http_500", None),
            ("normal", "connection_lost", "connection_refused",
             {**q.env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}),
            ("drop", "connection_lost", "stream_dropped", None)):
        pane = q.launch(env=env)
        q.send(pane, f"do the thing [[{mode}]]")
        what, screen, took = _retry_or_idle(q, pane, 900)
        if what == "timeout":
            q.shot(pane, "busy", f"{slug}_still_busy_15min", f"{mode}: still busy at 15 min")
        else:
            found = VISIBLE_RETRY.search(screen)
            q.shot(pane, state, f"{slug}_{'visible_retry' if found else 'final'}",
                   f"stand-in answered {mode}" if not env else "OPENAI_BASE_URL on a closed port",
                   screen=screen, **({"retry_after": int(found.group(1))} if found else {}),
                   notes=f"Shown {took}s after sending; spinner only before that.")
        q.s.close(pane)


@scenario("stall")
def stall(q: Qwen) -> None:
    pane = q.launch()
    q.send(pane, "think hard [[stall]]")
    q.s.wait(pane, BUSY)
    time.sleep(5)
    q.shot(pane, "busy", "stalled_stream_5s", "stand-in sent one chunk then nothing (5 s in)")
    what, screen, took = _retry_or_idle(q, pane, 240)
    if what == "timeout":
        q.shot(pane, "busy", "stalled_stream_4min", "stand-in stalled; 4 min in",
               notes="No timeout or error within 4 minutes; looks busy.")
    else:
        q.shot(pane, "connection_lost", "stalled_stream_gave_up", "stall: qwen reacted",
               screen=screen, notes=f"after {took}s")
    q.s.close(pane)


@scenario("pickers")
def pickers(q: Qwen) -> None:
    pane = q.launch()
    for cmd, slug, needle in (("/model", "model_picker", "Select Model"),
                              ("/resume", "session_picker", re.compile("[Ss]ession")),
                              ("/theme", "theme_picker", "Theme")):
        q.s.type(pane, cmd)
        time.sleep(0.8)
        q.s.keys(pane, "Enter")
        with contextlib.suppress(TimeoutError):
            q.s.wait(pane, needle, timeout=10)
        time.sleep(1.0)
        q.shot(pane, "picker", slug, f"typed {cmd}")
        q.s.keys(pane, "Escape")
        time.sleep(1.0)
    q.s.close(pane)


@scenario("exit")
def exits(q: Qwen) -> None:
    pane = q.launch()
    q.send(pane, "say hello")
    q.s.wait(pane, "Nothing to do here.")
    q.s.wait(pane, READY, absent=BUSY)
    q.s.type(pane, "/quit")
    time.sleep(0.8)
    q.s.keys(pane, "Enter")
    q.s.wait(pane, "user@host:")
    time.sleep(0.5)
    q.s.type(pane, "echo exit=$?", enter=True)
    time.sleep(0.8)
    q.shot(pane, "crashed", "after_quit_shell_prompt", "/quit, back at the shell prompt",
           notes="Normal exit (status echoed below). The summary box ends with 'To continue "
                 "this session, run qwen --resume <uuid>'.")
    q.s.close(pane)
    pane = q.launch()
    q.s.keys(pane, "C-c")
    time.sleep(0.8)
    q.shot(pane, "idle", "ctrl_c_once_hint", "one Ctrl-C at the empty prompt")
    q.s.keys(pane, "C-c")
    q.s.wait(pane, "user@host:")
    time.sleep(0.5)
    q.s.type(pane, "echo exit=$?", enter=True)
    time.sleep(0.8)
    q.shot(pane, "crashed", "after_ctrl_c_twice_shell_prompt", "Ctrl-C twice")
    q.s.close(pane)
    pane = q.launch()
    q.send(pane, "stream slowly [[slow]]")
    q.s.wait(pane, "step3")
    pid = q.s.agent_pid(pane, ("qwen",))
    assert pid
    kill_tree(pid)
    q.s.wait(pane, "user@host:")
    time.sleep(0.8)
    q.shot(pane, "crashed", "after_kill9_shell_prompt",
           "kill -9 of the node process while busy; bash prompt is back")
    q.s.close(pane)
    pane = q.s.start(f"{q.bin}", q.proj, q.env, shell=False)
    q.s.wait(pane, READY, timeout=60)
    time.sleep(1)
    kill_tree(q.s.tmux.pane_pid(pane))
    status = q.s.dead_status(pane)
    time.sleep(0.5)
    q.shot(pane, "crashed", "pane_dead_kill9", "qwen as the pane command, SIGKILLed",
           notes=f"tmux pane_dead_status={status!r}.")
    q.s.close(pane)


@scenario("exit_codes")
def exit_codes(q: Qwen) -> None:
    for slug, steps in (("pane_dead_after_quit", ["text:/quit", "sleep:1", "Enter"]),
                        ("pane_dead_after_ctrl_c_twice", ["C-c", "sleep:1", "C-c"])):
        print("  ", slug, exit_probe(q.s, q.bin, q.proj, q.env, READY, steps,
                                     slug=slug + q.suffix))


@scenario("update")
def update(q: Qwen) -> None:
    """With the default general.enableAutoUpdate=true qwen runs `npm install -g` on start
    (into the throwaway NPM_CONFIG_PREFIX here) and prints info lines about it."""
    q.write_settings(auth=True, auto_update=True)
    try:
        pane = q.launch()
        screen = q.s.wait(pane, re.compile(r"Update|update"), timeout=60)
        if "Update successful" not in screen:
            time.sleep(0.5)
            q.shot(pane, "idle", "update_notice_autoupdating",
                   "general.enableAutoUpdate=true (the default): qwen runs npm install -g",
                   notes="Info lines only; nothing waits for a key press.")
            q.s.wait(pane, re.compile(r"Update successful|update failed"), timeout=240)
        time.sleep(1)
        q.shot(pane, "idle", "update_successful_notice",
               "general.enableAutoUpdate=true (the default): qwen ran npm install -g "
               "@qwen-code/qwen-code@latest into the throwaway NPM_CONFIG_PREFIX",
               notes="Info line only; nothing waits for a key press.")
        q.s.close(pane)
    except TimeoutError:
        print("  no update notice (already the latest?)")
    finally:
        q.write_settings(auth=True, auto_update=False)


def _run(q: Qwen, args: list[str], cwd: Path, env: dict[str, str] | None = None,
         stdin: str | None = None, timeout: float = 300) -> dict[str, object]:
    full = {**os.environ, **q.s.base_env(), **q.env, **(env or {})}
    full["PWD"] = str(cwd)  # opencode takes its directory from $PWD, not getcwd()
    start = time.monotonic()
    rc: int | str
    try:
        proc = subprocess.run([q.bin, *args], cwd=cwd, env=full, capture_output=True, text=True,
                              input=stdin if stdin is not None else "", timeout=timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = "timeout", str(exc.stdout or ""), str(exc.stderr or "")
    home = str(q.s.home)
    return {"argv": ["qwen", *args], "cwd": str(cwd).replace(home, "~"), "rc": rc,
            "secs": round(time.monotonic() - start), "stdout": out.replace(home, "~")[-1500:],
            "stderr": err.replace(home, "~")[-1500:]}


def _sessions(q: Qwen) -> dict[str, list[str]]:
    """{project dir name: [session uuids]} under ~/.qwen/projects."""
    root = q.s.home / ".qwen" / "projects"
    return {d.name: sorted(p.stem for p in (d / "chats").glob("*.jsonl"))
            for d in sorted(root.glob("*")) if (d / "chats").is_dir()}


@scenario("extras")
def extras(q: Qwen) -> None:
    """Process tree, session files, resume, headless and hook facts, --help text."""
    import capkit

    facts: dict[str, object] = {"version": q.version}
    home = str(q.s.home)
    pane = q.launch()
    q.send(pane, "stream slowly [[slow]]")
    q.s.wait(pane, "step3")
    rows = capkit.process_tree(q.s.tmux.pane_pid(pane))
    for row in rows:
        row["cmdline"] = [str(a).replace(home, "~") for a in row["cmdline"]]  # type: ignore
    if not q.suffix:
        capkit.save_processes(PROVIDER, rows, f"qwen {q.version} busy in a tmux pane started "
                              "from bash: node runs the bin script, which re-spawns itself as a "
                              "second node process (the one doing the work). Captured by "
                              "capture_qwen.py.")
    facts["process_tree"] = rows
    q.s.close(pane)
    odd = q.s.workdir("resume dir_with.dot")
    other = q.s.workdir("other")
    facts["headless_plan"] = _run(q, ["-p", "say hello", "--approval-mode", "plan",
                                      "-m", "standin-model"], odd)
    facts["projects_after_first_run"] = _sessions(q)
    proj = [k for k in facts["projects_after_first_run"] if "resume" in k]  # type: ignore
    facts["project_dir_for_cwd"] = {"cwd": str(odd).replace(home, "~"),
                                    "dir": proj[0] if proj else None}
    sid = facts["projects_after_first_run"][proj[0]][0] if proj else None  # type: ignore
    facts["session_id"] = sid
    facts["headless_positional"] = _run(q, ["say hello positional", "--approval-mode", "plan"],
                                        odd)
    facts["headless_stdin"] = _run(q, ["--approval-mode", "plan"], odd, stdin="hello on stdin")
    facts["headless_tool_default_mode"] = _run(q, ["-p", "mark [[tool]]"], odd)
    facts["headless_tool_wrote_file"] = (odd / "pitcrew-standin.txt").exists()
    facts["headless_401"] = _run(q, ["-p", "x [[401]]"], odd)
    facts["headless_json"] = _run(q, ["-p", "hi", "-o", "json"], odd)
    facts["headless_no_recording"] = _run(q, ["-p", "hi", "--chat-recording", "false"], odd)
    before = {k: len(v) for k, v in _sessions(q).items()}
    facts["resume_by_id_same_dir"] = _run(q, ["--resume", str(sid), "-p", "again"], odd)
    facts["resume_by_id_other_dir"] = _run(q, ["--resume", str(sid), "-p", "again"], other)
    facts["continue_same_dir"] = _run(q, ["--continue", "-p", "again"], odd)
    facts["continue_other_dir"] = _run(q, ["--continue", "-p", "again"], other)
    facts["resume_bogus_id"] = _run(q, ["--resume", "00000000-0000-4000-8000-000000000000",
                                        "-p", "again"], odd)
    facts["session_counts_before_resumes"] = before
    facts["sessions_after"] = _sessions(q)
    facts["headless_429_limited_to_60s"] = _run(q, ["-p", "x [[429]]"], odd, timeout=60)
    # TUI resume screens
    pane = q.launch(f"--resume {sid}", cwd=odd)
    time.sleep(2)
    q.shot(pane, "idle", "resumed_by_id", "`qwen --resume <uuid>` in the session's cwd, offline")
    q.s.close(pane)
    pane = q.s.start(f"qwen --resume {sid}", other, q.env)
    time.sleep(10)
    q.shot(pane, "crashed", "resume_id_from_other_dir", "`qwen --resume <uuid>` in another cwd",
           notes="qwen --resume <uuid> from a cwd other than the session's: No saved session "
                 "found with ID <uuid>. … and straight back to the shell (sessions are per "
                 "project dir).")
    q.s.close(pane)
    # hooks: user-level settings.json, every event dumps its stdin
    dump = q.s.home / "hooks.jsonl"
    script = q.s.home / "hook.sh"
    script.write_text(f'#!/bin/sh\n{{ printf \'%s \' "$1"; cat; echo; }} >> {dump}\n')
    script.chmod(0o755)
    settings_path = q.s.home / ".qwen" / "settings.json"
    saved = settings_path.read_text()
    settings = json.loads(saved)
    events = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "Notification",
              "UserPromptSubmit", "SessionStart", "Stop", "SubagentStart", "SubagentStop",
              "SessionEnd", "PermissionRequest", "StopFailure"]
    settings["hooks"] = {e: [{"matcher": "*", "hooks": [{"type": "command",
                                                         "command": f"{script} {e}"}]}]
                         for e in events}
    settings_path.write_text(json.dumps(settings, indent=2))
    try:
        pane = q.launch(cwd=odd)
        q.send(pane, "write the marker [[tool]]")
        q.s.wait(pane, "Yes, allow once")
        time.sleep(1)
        q.s.keys(pane, "Enter")
        q.s.wait(pane, "marker file is written")
        q.until_idle(pane, 60) if BUSY.search(q.s.tmux.capture(pane)) else None
        q.send(pane, "x [[401]]")
        time.sleep(8)
        q.s.type(pane, "/quit")
        time.sleep(0.8)
        q.s.keys(pane, "Enter")
        q.s.wait(pane, "user@host:", timeout=30)
        q.s.close(pane)
        facts["headless_hooks_run"] = _run(q, ["-p", "hi"], odd)
    finally:
        settings_path.write_text(saved)
    dest = capkit.FIXTURES / "sessions" / PROVIDER
    if q.suffix:  # the latest version's sample sits in a subfolder of the default one
        dest = dest / f"qwen-{q.version}"
        shutil.rmtree(dest, ignore_errors=True)
    else:
        for old in (".qwen", "facts.json", "hook-payloads.txt"):
            shutil.rmtree(dest / old, ignore_errors=True)
            (dest / old).unlink(missing_ok=True) if (dest / old).is_file() else None
    dest.mkdir(parents=True, exist_ok=True)
    if dump.exists():
        (dest / "hook-payloads.txt").write_text(dump.read_text().replace(home, "/home/user"))
    qhome = q.s.home / ".qwen"
    for path in sorted(qhome.rglob("*")):
        rel = path.relative_to(q.s.home)
        if not path.is_file() or "skills" in rel.parts or "debug" in rel.parts:
            continue
        if path.suffix in (".jsonl", ".json", ".md") and path.stat().st_size < 200_000:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text(errors="replace").replace(home, "/home/user"))
    facts["home_placeholder"] = "~ = the capture's throwaway HOME; /home/user in copied files"
    (dest / "facts.json").write_text(json.dumps(facts, indent=2, default=str) + "\n")
    print(json.dumps({k: (v if not isinstance(v, dict) or "rc" not in v else
                          {"rc": v["rc"], "secs": v["secs"]}) for k, v in facts.items()
                      if k != "process_tree"}, indent=1, default=str)[:6000])


def write_help(q: Qwen) -> None:
    import capkit
    from capkit_b import run_help

    env = {**os.environ, **q.s.base_env(), **q.env}
    text = run_help(q.bin, [["--version"], ["--help"], ["hooks", "--help"]], env)
    path = capkit.FIXTURES / "cli-help" / "qwen.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = f"# qwen {q.version} ({'current latest' if q.suffix else 'npm default for node 20'})\n"
    if q.suffix:  # appended after the default version's section (run the default one first)
        old = path.read_text() if path.exists() else ""
        old = old.split(f"\n\n# qwen {q.version}")[0]
        path.write_text(old.rstrip("\n") + "\n\n" + header + text)
    else:
        path.write_text(header + text)


@scenario("help")
def help_text(q: Qwen) -> None:
    write_help(q)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latest", action="store_true")
    parser.add_argument("--only", nargs="*", default=[])
    args = parser.parse_args()
    q = Qwen(args.latest, [])
    print(f"qwen {q.version}, HOME={q.s.home}, stand-in {q.s.server.base_url}", flush=True)
    default_skip = {"rate_limit_final"}
    try:
        for name, fn in SCENARIOS:
            if args.only and not any(o in name for o in args.only):
                continue
            if not args.only and name in default_skip:
                continue
            print(f"- {name}", flush=True)
            try:
                fn(q)
            except Exception as exc:
                print(f"  FAILED {name}: {exc}", flush=True)
    finally:
        q.s.finish()
        if not os.environ.get("KEEP_HOME"):
            shutil.rmtree(q.s.home, ignore_errors=True)


if __name__ == "__main__":
    main()
