"""Capture real opencode (npm `opencode-ai`) screens into tests/fixtures/screens/opencode/.

opencode is pointed at the local stand-in (standin_openai_chat.py) through a custom
``@ai-sdk/openai-compatible`` provider in a throwaway ``~/.config/opencode/opencode.json``, so
no vendor network is needed. Every scenario starts a fresh opencode in its own tmux pane
(inside ``bash --norc``), drives it with send-keys and saves the pane with capkit.save_screen.

Usage::

    /work/main/.venv/bin/python tests/capture/capture_opencode.py            # everything
    /work/main/.venv/bin/python tests/capture/capture_opencode.py --only idle rate_limit
    OPENCODE_BIN=/path/to/opencode ... capture_opencode.py

Without OPENCODE_BIN the CLI is installed (once) with
``npm install --prefix $PITCREW_REALCLI/opencode opencode-ai`` (PITCREW_REALCLI defaults to
/tmp/realcli2). It always runs with a throwaway HOME, DISABLE_AUTOUPDATER=1,
OPENCODE_DISABLE_AUTOUPDATE=1 and a throwaway NPM_CONFIG_PREFIX. ``--only`` takes substrings of
the fixture names. ``--extras`` also refreshes processes/opencode.json,
sessions/opencode/ and cli-help/opencode.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

import capkit
from capkit_b import Session, ensure_installed, exit_probe, kill_tree, run_help

PROVIDER = "opencode"
BUSY = re.compile(r"[■⬝]{8}\s+esc interrupt")
PROMPT_READY = "ctrl+p commands"

# The SQL that maps a working directory to its newest top-level session (see notes).
NEWEST_SESSION_SQL = (
    "SELECT id FROM session WHERE directory = ? AND parent_id IS NULL "
    "AND time_archived IS NULL ORDER BY time_updated DESC LIMIT 1"
)


def opencode_config(base_url: str, extra: dict[str, object] | None = None) -> dict[str, object]:
    config: dict[str, object] = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "model": "standin/standin-model",
        "provider": {"standin": {
            "npm": "@ai-sdk/openai-compatible", "name": "Stand-in",
            "options": {"baseURL": base_url, "apiKey": "sk-fake-standin-0000"},
            "models": {"standin-model": {"name": "Stand-in Model", "tool_call": True}},
        }},
    }
    config.update(extra or {})
    return config


class OpenCode:
    def __init__(self, only: list[str]) -> None:
        binary = os.environ.get("OPENCODE_BIN")
        self.bin = binary or str(ensure_installed("opencode", "opencode-ai") / "opencode")
        self.version = subprocess.run([self.bin, "--version"], capture_output=True,
                                      text=True).stdout.strip()
        self.s = Session(PROVIDER, self.version, "capture_opencode.py", out_filter=only,
                         notes=NOTES)
        cfg_dir = self.s.home / ".config" / "opencode"
        cfg_dir.mkdir(parents=True)
        (cfg_dir / "opencode.json").write_text(
            json.dumps(opencode_config(self.s.server.base_url), indent=2))
        self.proj = self.s.workdir("oc-proj")
        self.env = {"OPENCODE_DISABLE_AUTOUPDATE": "1",
                    "PATH": f"{Path(self.bin).parent}:{os.environ.get('PATH', '')}"}

    def extra_config(self, name: str, extra: dict[str, object],
                     base_url: str | None = None) -> dict[str, str]:
        """Env that makes opencode read one more config file (OPENCODE_CONFIG)."""
        path = self.s.home / f"{name}.json"
        path.write_text(json.dumps(opencode_config(base_url or self.s.server.base_url, extra)))
        return {**self.env, "OPENCODE_CONFIG": str(path)}

    def launch(self, args: str = "", cwd: Path | None = None, env: dict[str, str] | None = None,
               width: int = 120, height: int = 40, ready: str = PROMPT_READY) -> str:
        pane = self.s.start(f"opencode {args}".strip(), cwd or self.proj, env or self.env,
                            width=width, height=height)
        self.s.wait(pane, ready, timeout=60)
        time.sleep(1.0)
        return pane

    def send(self, pane: str, text: str) -> None:
        self.s.type(pane, text, enter=True)


# Default notes for fixtures whose scenario passes none (what to know when reading them).
NOTES: dict[str, str] = {
    "connection_lost__connection_refused":
        "opencode retries forever; the status line shows the error only while waiting for the "
        "next attempt.",
    "login_required__connect_provider":
        "/connect opens the provider list (auth). Picked login_required because it is about "
        "credentials; it is also a picker.",
    "question__question_tool":
        "Stand-in called opencode's built-in `question` tool (offered by default in 1.18.33).",
}


SCENARIOS: list[tuple[str, Callable[[OpenCode], None]]] = []


def scenario(name: str) -> Callable[[Callable[[OpenCode], None]], Callable[[OpenCode], None]]:
    def deco(fn: Callable[[OpenCode], None]) -> Callable[[OpenCode], None]:
        SCENARIOS.append((name, fn))
        return fn
    return deco


@scenario("idle")
def idle(oc: OpenCode) -> None:
    for w, h in ((120, 40), (80, 24)):
        pane = oc.launch(width=w, height=h)
        screen = oc.s.settle(pane)
        suffix = "" if w == 120 else f"_{w}x{h}"
        oc.s.shot(pane, "idle", f"home_empty_prompt{suffix}", "fresh start, home screen",
                  screen=screen, evidence="Ask anything",
                  notes='Empty input box; "Ask anything… "Fix broken tests"" is dim placeholder '
                        "text (the example after it rotates between starts).")
        if w == 120:
            oc.s.type(pane, "refactor the parser so it accepts tabs")
            time.sleep(1.0)
            oc.s.shot(pane, "draft", "home_typed", "typed into the home input, not sent",
                      notes="Unsent text in the input box of the home screen.")
            for line in ("and also", "keep the old tests passing"):
                oc.s.keys(pane, "C-j")
                oc.s.type(pane, line)
            time.sleep(1.0)
            oc.s.shot(pane, "draft", "home_multiline", "three lines typed (ctrl+j newlines)",
                      notes="ctrl+j inserts a newline in the opencode input box.")
        oc.s.close(pane)


@scenario("session")
def session_screens(oc: OpenCode) -> None:
    """Idle after a reply, drafts in a session, busy streaming, the idle hard negative."""
    pane = oc.launch()
    oc.send(pane, "say hello")
    screen = oc.s.wait(pane, "Nothing to do here.", absent=BUSY)
    screen = oc.s.settle(pane)
    oc.s.shot(pane, "idle", "after_reply", "after a normal stand-in reply", screen=screen,
              notes="Session view: empty input at the bottom, footer shows cwd, context and "
                    "'ctrl+p commands' (the busy footer shows a spinner + 'esc interrupt').")
    oc.s.type(pane, "now add a test for it")
    time.sleep(1.0)
    oc.s.shot(pane, "draft", "session_typed", "typed into the session input, not sent")
    oc.s.keys(pane, "C-u")
    time.sleep(0.5)
    oc.send(pane, "stream slowly [[slow]]")
    oc.s.wait(pane, "step3")
    oc.s.wait(pane, BUSY)
    oc.s.shot(pane, "busy", "streaming", "stand-in streaming a reply word by word",
              evidence="esc interrupt")
    oc.s.wait(pane, "step80", timeout=90)
    oc.s.settle(pane)
    oc.send(pane, "write a retry helper [[code429]]")
    oc.s.wait(pane, "caller can back off")
    screen = oc.s.settle(pane)
    oc.s.shot(pane, "idle", "transcript_mentions_429", "stand-in replied with code about 429",
              screen=screen, hard_negative=True,
              notes="Transcript contains '429 Too Many Requests' and 'rate limit' inside a code "
                    "block and a diff; the CLI itself is idle.")
    oc.s.close(pane)
    pane = oc.launch()
    oc.send(pane, "write a retry helper, slowly [[code429slow]]")
    oc.s.wait(pane, "usage limit", timeout=60)
    oc.s.wait(pane, BUSY)
    oc.s.shot(pane, "busy", "streaming_code_mentions_429",
              "stand-in streaming code about 429 slowly", hard_negative=True,
              notes="Busy (spinner + 'esc interrupt') while the streamed text quotes "
                    "'429 Too Many Requests' / 'rate limit reached'.")
    oc.s.close(pane)


@scenario("busy_small")
def busy_small(oc: OpenCode) -> None:
    pane = oc.launch(width=80, height=24)
    oc.send(pane, "stream slowly [[slow]]")
    oc.s.wait(pane, "step3")
    oc.s.shot(pane, "busy", "streaming_80x24", "stand-in streaming, 80x24",
              evidence="esc interrupt")
    oc.s.close(pane)


@scenario("question")
def question(oc: OpenCode) -> None:
    pane = oc.launch()
    oc.send(pane, "which database? [[toolq]]")
    oc.s.wait(pane, "enter submit")
    time.sleep(0.5)
    oc.s.shot(pane, "question", "question_tool", "stand-in called opencode's `question` tool",
              evidence="enter submit")
    oc.s.keys(pane, "Escape")
    oc.s.close(pane)
    env = oc.extra_config("ask-bash", {"permission": {"bash": "ask", "edit": "ask"}})
    for w, h in ((120, 40), (80, 24)):
        pane = oc.launch(env=env, width=w, height=h)
        oc.send(pane, "write the marker [[tool]]")
        oc.s.wait(pane, re.compile(r"Allow (once|always)|Reject"), timeout=40)
        time.sleep(0.8)
        suffix = "" if w == 120 else f"_{w}x{h}"
        oc.s.shot(pane, "question", f"permission_bash{suffix}",
                  'stand-in called the bash tool with "permission": {"bash": "ask"} in config',
                  notes="opencode's default permission for bash is allow; this menu appears "
                        "only when the config asks for it.")
        oc.s.close(pane)


def _rate_limit(oc: OpenCode, mode: str, slug: str, needle: str | re.Pattern[str],
                notes: str, wait_extra: float = 0.0, **extra: object) -> None:
    """Send a message the stand-in fails with `mode`; save the screen the moment `needle` shows.

    opencode shows the error only while it waits for the next retry, so the shot is taken right
    away (a later capture may show the plain spinner of the retry instead).
    """
    pane = oc.launch()
    oc.send(pane, f"do the thing [[{mode}]]")
    screen = oc.s.wait(pane, needle, timeout=60)
    if wait_extra:
        time.sleep(wait_extra)
        screen = oc.s.wait(pane, needle, timeout=60)
    found = RETRY_IN.search(screen)
    if found and "retry_after" not in extra:
        extra["retry_after"] = _seconds(found.group(1))
    reset = RESETS_AT.search(screen)
    if reset:
        extra["reset_at"] = reset.group(1).replace("Z", "+00:00")
    state = extra.pop("state", "rate_limit")
    oc.s.shot(pane, str(state), slug, f"stand-in answered {mode}", screen=screen, notes=notes,
              **extra)
    oc.s.close(pane)


RETRY_IN = re.compile(r"retrying in ((?:\d+h ?)?(?:\d+m ?)?(?:\d+s)?)")
RESETS_AT = re.compile(r"resets at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")


def _seconds(text: str) -> int:
    total = 0
    for amount, unit in re.findall(r"(\d+)([hms])", text):
        total += int(amount) * {"h": 3600, "m": 60, "s": 1}[unit]
    return total


@scenario("rate_limit")
def rate_limit(oc: OpenCode) -> None:
    _rate_limit(oc, "429ra", "429_retrying_retry_after", "retrying in",
                "HTTP 429 with retry-after: 7. opencode shows the error message in the status "
                "line with '[retrying in Ns #k]' and keeps retrying (for as long as watched).",
                evidence="retrying in")
    _rate_limit(oc, "429", "429_retrying_no_headers", "retrying in",
                "HTTP 429, no retry headers; opencode backs off by itself.",
                evidence="retrying in")
    _rate_limit(oc, "429reset", "429_reset_in_1h", "retrying in",
                "HTTP 429 with retry-after: 3600 and x-ratelimit-reset headers; the body names "
                "the reset instant. The status line is cut at the pane width.",
                wait_extra=1.0, evidence="usage limit")
    _rate_limit(oc, "429quota", "insufficient_quota", re.compile(r"exceeded your current quota|"
                                                                 r"retrying in"),
                "HTTP 429 insufficient_quota body; opencode retries it like any 429.")
    _rate_limit(oc, "429qwen", "allocation_quota", re.compile(r"quota exceeded|retrying in"),
                "HTTP 429 with DashScope's Throttling.AllocationQuota body.")


@scenario("errors")
def errors(oc: OpenCode) -> None:
    _rate_limit(oc, "401", "invalid_api_key", "Incorrect API key",
                "HTTP 401 invalid_api_key: opencode prints the provider's message in the "
                "transcript and goes idle.", state="login_required", evidence="Incorrect API key")
    _rate_limit(oc, "500", "http_500", re.compile(r"retrying in|server had an error"),
                "HTTP 500.", state="connection_lost", wait_extra=1.0)
    _rate_limit(oc, "503", "http_503_overloaded", re.compile(r"retrying in|overloaded"),
                "HTTP 503 'The engine is currently overloaded'.", state="connection_lost",
                wait_extra=1.0)
    pane = oc.launch()
    oc.send(pane, "drop it [[drop]]")
    oc.s.wait(pane, lambda screen: screen.count("Hello! I am the") >= 3, timeout=60)
    oc.s.shot(pane, "busy", "stream_dropped_repeating",
              "stand-in closes the socket after 4 words, every time",
              notes="opencode silently re-requests: each attempt leaves another partial "
                    "'Hello! I am the' in the transcript; spinner only, no error text.")
    oc.s.close(pane)


@scenario("refused")
def refused(oc: OpenCode) -> None:
    env = oc.extra_config("refused", {}, base_url="http://127.0.0.1:9/v1")
    pane = oc.launch(env=env)
    oc.send(pane, "hello?")
    oc.s.wait(pane, re.compile(r"retrying in|Unable to connect|ECONNREFUSED|Cannot connect"),
              timeout=60)
    time.sleep(1.0)
    oc.s.shot(pane, "connection_lost", "connection_refused",
              "provider baseURL points at a closed port (127.0.0.1:9)")
    oc.s.close(pane)


@scenario("stall")
def stall(oc: OpenCode) -> None:
    pane = oc.launch()
    oc.send(pane, "think hard [[stall]]")
    oc.s.wait(pane, BUSY)
    time.sleep(5)
    oc.s.shot(pane, "busy", "stalled_stream_5s",
              "stand-in sent headers and one chunk, then nothing (5 s in)")
    time.sleep(120)
    oc.s.shot(pane, "busy", "stalled_stream_2min",
              "stand-in sent headers and one chunk, then nothing (2 min in)",
              notes="No timeout or error is shown; opencode looks busy forever.")
    oc.s.close(pane)


@scenario("pickers")
def pickers(oc: OpenCode) -> None:
    pane = oc.launch()
    oc.send(pane, "hello")
    oc.s.wait(pane, "Nothing to do here.")
    oc.s.settle(pane)
    for cmd, slug, needle, state in (("/models", "model_picker", "Select model", "picker"),
                                     ("/sessions", "session_picker", "Sessions", "picker"),
                                     ("/connect", "connect_provider", "Connect a provider",
                                      "login_required")):
        oc.s.type(pane, cmd)
        time.sleep(0.8)
        oc.s.keys(pane, "Enter")
        with contextlib.suppress(TimeoutError):
            oc.s.wait(pane, needle, timeout=10)
        time.sleep(1.0)
        oc.s.shot(pane, state, slug, f"typed {cmd}")
        oc.s.keys(pane, "Escape")
        time.sleep(1.0)
    oc.s.close(pane)


@scenario("exit")
def exits(oc: OpenCode) -> None:
    # /exit inside the shell: the shell prompt + resume hint is what a person sees.
    pane = oc.launch()
    oc.send(pane, "hello")
    oc.s.wait(pane, "Nothing to do here.")
    oc.s.settle(pane)
    oc.s.type(pane, "/exit")
    time.sleep(0.8)
    oc.s.keys(pane, "Enter")
    screen = oc.s.wait(pane, "user@host:")
    time.sleep(0.5)
    oc.s.type(pane, "echo exit=$?", enter=True)
    time.sleep(0.8)
    screen = oc.s.tmux.capture(pane)
    oc.s.shot(pane, "crashed", "after_exit_shell_prompt", "/exit, back at the shell prompt",
              screen=screen, notes="Normal exit (status 0, echoed). opencode prints "
              "'Session <title>' / 'Continue  opencode -s ses_…' before the shell prompt.")
    oc.s.close(pane)
    # kill -9 of the agent, still in the shell
    pane = oc.launch()
    oc.send(pane, "stream slowly [[slow]]")
    oc.s.wait(pane, "step3")
    pid = oc.s.agent_pid(pane, ("opencode",))
    assert pid
    os.kill(pid, 9)
    oc.s.wait(pane, "user@host:")
    time.sleep(0.8)
    oc.s.shot(pane, "crashed", "after_kill9_shell_prompt",
              "kill -9 of the opencode process while busy; bash prompt is back",
              notes="The alternate screen is not restored cleanly: remains of the TUI may be "
                    "left above the shell prompt.")
    oc.s.close(pane)
    # kill -9 with opencode as the pane's own command: pane dead
    pane = oc.s.start(f"{oc.bin}", oc.proj, oc.env, shell=False)
    oc.s.wait(pane, PROMPT_READY, timeout=60)
    time.sleep(1)
    kill_tree(oc.s.tmux.pane_pid(pane))
    status = oc.s.dead_status(pane)
    time.sleep(0.5)
    oc.s.shot(pane, "crashed", "pane_dead_kill9",
              "opencode run as the pane command, SIGKILLed; remain-on-exit",
              notes=f"tmux pane_dead_status={status!r}.")
    oc.s.close(pane)


@scenario("exit_codes")
def exit_codes(oc: OpenCode) -> None:
    for slug, steps in (("pane_dead_after_exit_command", ["text:/exit", "sleep:1", "Enter"]),
                        ("pane_dead_after_ctrl_c", ["C-c", "sleep:1", "C-c"])):
        print("  ", slug, exit_probe(oc.s, oc.bin, oc.proj, oc.env, PROMPT_READY, steps,
                                     slug=slug, alive_state="unknown"))


@scenario("upgrade")
def upgrade(oc: OpenCode) -> None:
    """opencode's update check: `npm list -g` must list opencode-ai (then it asks the npm
    registry from npm's config for `/opencode-ai/latest`). A fake global package in the
    throwaway NPM_CONFIG_PREFIX + NPM_CONFIG_REGISTRY=<stand-in> make it see "1.99.0".
    The global config must not say `"autoupdate": false`.
    """
    fake = oc.s.npm_prefix / "lib" / "node_modules" / "opencode-ai"
    fake.mkdir(parents=True, exist_ok=True)
    (fake / "package.json").write_text(json.dumps({"name": "opencode-ai",
                                                   "version": oc.version}))
    oc.s.server.state.fake_latest = "1.99.0"
    cfg = oc.s.home / ".config" / "opencode" / "opencode.json"
    saved = cfg.read_text()
    cfg.write_text(json.dumps(opencode_config(oc.s.server.base_url, {"autoupdate": "notify"})))
    env = {**oc.env, "NPM_CONFIG_REGISTRY": oc.s.server.base_url.removesuffix("/v1")}
    env.pop("OPENCODE_DISABLE_AUTOUPDATE", None)
    try:
        for w, h in ((120, 40), (80, 24)):
            pane = oc.launch(env=env, width=w, height=h)
            try:
                oc.s.wait(pane, "Update Available", timeout=40)
                time.sleep(1)
                size = "" if w == 120 else f"_{w}x{h}"
                oc.s.shot(pane, "upgrade_prompt", f"update_available_dialog{size}",
                          'autoupdate="notify", npm registry (stand-in) says 1.99.0',
                          evidence="Update Available",
                          notes="Modal dialog; waits for a choice (skip / update).")
            except TimeoutError as exc:
                print(f"  no update notice: {str(exc)[-300:]}")
            oc.s.close(pane)
    finally:
        cfg.write_text(saved)
        shutil.rmtree(fake, ignore_errors=True)


PLUGIN_JS = """import { appendFileSync } from "node:fs";
// ~/.config/opencode/plugin/pitcrew.js: log every bus event and two hooks (capture_opencode.py)
export const Pitcrew = async ({ directory }) => {
  const log = (kind, payload) =>
    appendFileSync("EVENTS_LOG", JSON.stringify({ kind, directory, payload }) + "\\n");
  return {
    event: async ({ event }) => log("event", event),
    "tool.execute.before": async (input, output) => log("tool.execute.before", { input, output }),
    "permission.ask": async (input, output) => log("permission.ask", { input, output }),
  };
};
"""


def _run(oc: OpenCode, args: list[str], cwd: Path, env: dict[str, str] | None = None,
         stdin: str | None = None, timeout: float = 180) -> dict[str, object]:
    full = {**os.environ, **oc.s.base_env(), **oc.env, **(env or {})}
    full["PWD"] = str(cwd)  # opencode takes its directory from $PWD, not getcwd()
    start = time.monotonic()
    rc: int | str
    try:
        proc = subprocess.run([oc.bin, *args], cwd=cwd, env=full, capture_output=True,
                              text=True, input=stdin if stdin is not None else "",
                              timeout=timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc = f"timeout after {timeout}s"
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
    strip = re.compile(r"\x1b\[[0-9;]*m")
    home = str(oc.s.home)
    return {"argv": ["opencode", *args], "cwd": str(cwd).replace(home, "~"), "rc": rc,
            "secs": round(time.monotonic() - start),
            "stdout": strip.sub("", out).replace(home, "~")[-1500:],
            "stderr": strip.sub("", err).replace(home, "~")[-1500:]}


def _db(oc: OpenCode) -> Path:
    return oc.s.home / ".local" / "share" / "opencode" / "opencode.db"


def _newest(oc: OpenCode, directory: Path) -> str | None:
    with sqlite3.connect(_db(oc)) as db:
        row = db.execute(NEWEST_SESSION_SQL, (str(directory),)).fetchone()
    return row[0] if row else None


def _messages(oc: OpenCode, session_id: str) -> int:
    with sqlite3.connect(_db(oc)) as db:
        return int(db.execute("SELECT count(*) FROM message WHERE session_id = ?",
                              (session_id,)).fetchone()[0])


@scenario("extras")
def extras(oc: OpenCode) -> None:
    """Process tree, session DB sample + schema, resume and headless facts, --help texts."""
    facts: dict[str, object] = {"version": oc.version}
    fixtures = capkit.FIXTURES
    # (1) process tree while busy, started from a shell like a user would
    pane = oc.launch()
    oc.send(pane, "stream slowly [[slow]]")
    oc.s.wait(pane, "step3")
    rows = capkit.process_tree(oc.s.tmux.pane_pid(pane))
    home = str(oc.s.home)
    for row in rows:
        row["cmdline"] = [str(a).replace(home, "~") for a in row["cmdline"]]  # type: ignore
    capkit.save_processes(PROVIDER, rows, f"opencode {oc.version} busy in a tmux pane started "
                          "from bash; opencode-ai's bin/opencode.exe is the native (bun) binary "
                          "itself, no node wrapper. Captured by capture_opencode.py.")
    oc.s.close(pane)
    # (2)+(4) sessions in a known cwd and resume
    odd = oc.s.workdir("resume dir_with.dot")
    other = oc.s.workdir("other")
    first = _run(oc, ["run", "-m", "standin/standin-model", "say hello"], odd)
    sid = _newest(oc, odd)
    facts["first_run"] = first
    facts["newest_session_sql"] = NEWEST_SESSION_SQL
    facts["session_id_in_known_cwd"] = sid
    assert sid
    before = _messages(oc, sid)
    facts["run_continue_same_dir"] = _run(oc, ["run", "-c", "-m", "standin/standin-model",
                                               "again"], odd)
    facts["run_continue_same_dir_appended_to_same_session"] = _messages(oc, sid) > before
    facts["run_continue_other_dir"] = _run(oc, ["run", "-c", "-m", "standin/standin-model",
                                                "from elsewhere"], other)
    facts["run_continue_other_dir_newest_there"] = _newest(oc, other)
    facts["run_continue_other_dir_appended_to_first"] = _messages(oc, sid)
    facts["run_session_by_id_other_dir"] = _run(oc, ["run", "-s", sid, "-m",
                                                     "standin/standin-model", "by id"], other,
                                                 timeout=90)
    facts["run_session_bogus_id"] = _run(oc, ["run", "-s", "ses_doesnotexist000000000000",
                                              "-m", "standin/standin-model", "x"], odd)
    facts["session_list_json"] = _run(oc, ["session", "list", "--format", "json"], odd)
    # headless read-only checker
    marker = odd / "pitcrew-standin.txt"
    facts["run_plan_agent_tool_call"] = _run(oc, ["run", "--agent", "plan", "-m",
                                                  "standin/standin-model", "mark [[tool]]"], odd)
    facts["run_plan_agent_wrote_file"] = marker.exists()
    marker.unlink(missing_ok=True)
    deny = {"OPENCODE_PERMISSION": json.dumps({"bash": "deny", "edit": "deny",
                                               "webfetch": "deny"})}
    facts["run_readonly_tool_call"] = _run(oc, ["run", "--agent", "plan", "-m",
                                                "standin/standin-model", "mark [[tool]]"],
                                           odd, env=deny)
    facts["run_readonly_wrote_file"] = marker.exists()
    facts["run_stdin"] = _run(oc, ["run", "-m", "standin/standin-model"], odd,
                              stdin="say hello from stdin")
    facts["run_401"] = _run(oc, ["run", "-m", "standin/standin-model", "x [[401]]"], odd)
    facts["run_429"] = _run(oc, ["run", "-m", "standin/standin-model", "x [[429quota]]"], odd)
    facts["run_json"] = _run(oc, ["run", "--format", "json", "-m", "standin/standin-model",
                                  "say hello"], odd)
    # TUI resume screens
    pane = oc.launch(f"-s {sid}", cwd=other)
    oc.s.wait(pane, "Nothing to do here.", timeout=30)
    time.sleep(1)
    oc.s.shot(pane, "idle", "resumed_by_id", "`opencode -s <id>` from another cwd, offline",
              notes="Resuming by id works from any directory and without a model call.")
    oc.s.close(pane)
    pane = oc.s.start("opencode -s ses_doesnotexist000000000000", odd, oc.env)
    time.sleep(8)
    oc.s.shot(pane, "crashed", "resume_bogus_id", "`opencode -s <unknown id>`",
              notes="`opencode -s <unknown id>` prints Error: Session not found: <id> and exits "
                    "straight back to the shell.")
    oc.s.close(pane)
    # plugin: a user plugin that logs every event/hook call (works offline)
    events_log = oc.s.home / "plugin-events.jsonl"
    plugin_dir = oc.s.home / ".config" / "opencode" / "plugin"
    plugin_dir.mkdir(parents=True, exist_ok=True)
    (plugin_dir / "pitcrew.js").write_text(PLUGIN_JS.replace("EVENTS_LOG", str(events_log)))
    facts["plugin_run_tool"] = _run(oc, ["run", "-m", "standin/standin-model", "mark [[tool]]"],
                                    odd)
    facts["plugin_run_401"] = _run(oc, ["run", "-m", "standin/standin-model", "x [[401]]"], odd)
    (plugin_dir / "pitcrew.js").unlink()
    # session sample: the DB itself (small, no secrets: the fake key lives in opencode.json)
    dest = fixtures / "sessions" / PROVIDER
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    (dest / "plugin-pitcrew.js").write_text(PLUGIN_JS)
    if events_log.exists():
        wanted = ("session.status", "session.error", "session.idle", "session.created",
                  "permission.asked", "permission.updated", "message.updated")
        keep = []
        for line in events_log.read_text().splitlines():
            row = json.loads(line)
            kind = row["payload"].get("type") if isinstance(row["payload"], dict) else None
            if row["kind"] != "event" or kind in wanted:
                keep.append(line.replace(home, "/home/user"))
        (dest / "plugin-events.sample.jsonl").write_text("\n".join(keep) + "\n")
    (dest / ".local" / "share" / "opencode").mkdir(parents=True)
    sample = dest / ".local" / "share" / "opencode" / "opencode.db"
    with sqlite3.connect(_db(oc)) as src, sqlite3.connect(sample) as out:
        src.backup(out)
    with sqlite3.connect(sample) as out:
        out.execute("DELETE FROM event")  # large, not needed to map cwd -> session
        out.commit()
    with sqlite3.connect(sample) as out:
        out.execute("VACUUM")
    schema = subprocess.run(["sqlite3", str(sample), ".schema"], capture_output=True,
                            text=True).stdout
    (dest / "opencode.db.schema.sql").write_text(schema)
    state = oc.s.home / ".local" / "state" / "opencode"
    for name in ("prompt-history.jsonl", "model.json"):
        if (state / name).exists():
            target = dest / ".local" / "state" / "opencode" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text((state / name).read_text().replace(home, "/home/user"))
    facts["home_placeholder"] = "paths inside the sample DB are the capture's throwaway HOME"
    (dest / "facts.json").write_text(json.dumps(facts, indent=2, default=str) + "\n")
    # --help texts
    env = {**os.environ, **oc.s.base_env(), **oc.env}
    text = run_help(oc.bin, [["--version"], ["--help"], ["run", "--help"], ["session", "--help"],
                             ["session", "list", "--help"], ["export", "--help"]], env)
    (fixtures / "cli-help").mkdir(exist_ok=True)
    (fixtures / "cli-help" / "opencode.txt").write_text(text)
    print(json.dumps({k: v for k, v in facts.items() if not isinstance(v, dict)}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=[],
                        help="scenario names (or substrings of them) to run")
    args = parser.parse_args()
    oc = OpenCode([])
    print(f"opencode {oc.version}, HOME={oc.s.home}, stand-in {oc.s.server.base_url}")
    try:
        for name, fn in SCENARIOS:
            if args.only and not any(o in name for o in args.only):
                continue
            print(f"- {name}", flush=True)
            try:
                fn(oc)
            except Exception as exc:  # keep going: one missing screen must not stop the rest
                print(f"  FAILED {name}: {exc}", flush=True)
    finally:
        oc.s.finish()
        if not os.environ.get("KEEP_HOME"):
            shutil.rmtree(oc.s.home, ignore_errors=True)


if __name__ == "__main__":
    main()
