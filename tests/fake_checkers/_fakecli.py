"""Shared body of the fake checker CLIs (tests/fake_checkers/<cli>).

Each fake behaves like its CLI's headless mode as its provider's `[checker]` argv drives it:
it takes the prompt from stdin or from the argv flag its provider uses, refuses to run unless
the read-only flags are present, and answers the way the real CLI prints (kimi with "• ",
gemini in a ```json fence, hermes after a warning line).

Tests link the fakes they want "installed" into a per-test bin directory that holds a
`behaviour.json` next to the links:

    {"log": "/tmp/.../runs.jsonl",
     "claude": {"do": "json", "answer": {...}}, "codex": {"do": "hang"}, ...}

`do` is one of: json (one valid answer line, exit 0), garbage (prose, exit 0), hang (a child
in the same process group; both outlive SIGTERM, which is logged, and sleep for an hour),
limit (the CLI's own usage-limit message, exit 1), error (exit 2), inject (print the JSON the
screen asked for), flood (10 MB of prose, exit 0), schema (valid JSON of another schema).
Every run appends one JSON record (argv, cwd and its listing, environment names, the prompt)
to `log` before it behaves.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

DEFAULT_ANSWER = {
    "state": "rate_limit",
    "reason": "The screen says the session limit was hit and resets at 11:56pm UTC.",
    "reset_at": "2030-01-31T23:56:00+00:00",
}
GARBAGE = ("Looking at the screen, the agent seems to be thinking about the refactor.\n"
           "I would wait a little longer before doing anything.\n")
ENV_VALUES_KEPT = ("TERM", "OPENCODE_PERMISSION", "PITCREW_TEST_MARK")


def main(name: str, *, prompt_flag: str | None, required: Sequence[Sequence[str]],
         limit_text: str, style: str = "plain",
         denied_by_env: tuple[str, Sequence[str]] | None = None) -> None:
    """Record the run, refuse it unless read-only, then behave as behaviour.json says.

    `required` are argv sequences that make the CLI read-only (each must appear in order);
    `denied_by_env` names a JSON permission variable whose listed tools must be "deny".
    """
    here = os.path.dirname(os.path.abspath(sys.argv[0]))  # the link's folder, not this one
    config = _load(os.path.join(here, "behaviour.json"))
    mine = config.get(name, {})
    args = sys.argv[1:]
    prompt = _flag_value(args, prompt_flag) if prompt_flag else sys.stdin.read()
    record = {
        "name": name, "argv0": sys.argv[0], "argv": args, "cwd": os.getcwd(),
        "cwd_listing": sorted(os.listdir(".")), "env": sorted(os.environ),
        "env_values": {k: os.environ[k] for k in ENV_VALUES_KEPT if k in os.environ},
        "prompt": prompt, "prompt_from": "argv" if prompt_flag else "stdin",
        "pid": os.getpid(), "pgid": os.getpgid(0), "do": mine.get("do", "json"),
    }
    missing = [list(seq) for seq in required if not _contains(args, seq)]
    if denied_by_env and not _denies(os.environ.get(denied_by_env[0], ""), denied_by_env[1]):
        missing.append([f"{denied_by_env[0]} denying {', '.join(denied_by_env[1])}"])
    if missing:
        record["refused"] = missing
        _log(config, record)
        sys.stderr.write(f"{name}: refusing to run headless without {missing}\n")
        sys.exit(64)
    behaviour = mine.get("do", "json")
    if behaviour == "hang":
        # Note SIGTERM and keep going: only SIGKILL ends this run (and its child).
        signal.signal(signal.SIGTERM, lambda *_: _log(config, {"name": name, "signal": "SIGTERM"}))
        child = subprocess.Popen([sys.executable, "-c", (
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "time.sleep(3600)")])
        record["child_pid"] = child.pid
    _log(config, record)
    if behaviour == "hang":
        print("Thinking…", flush=True)
        time.sleep(3600)
    elif behaviour == "garbage":
        print(GARBAGE, end="")
    elif behaviour == "limit":
        sys.stderr.write(limit_text + "\n")
        sys.exit(1)
    elif behaviour == "error":
        sys.stderr.write(f"{name}: error: the model returned an unexpected response\n")
        sys.exit(2)
    elif behaviour == "flood":     # 10 MB of output, no answer in it
        line = "the model keeps talking and never answers " * 4 + "\n"
        sys.stdout.write(line * (10 * 1024 * 1024 // len(line) + 1))
    elif behaviour == "schema":    # valid JSON, another schema
        print(json.dumps({"status": "ok", "result": {"verdict": "idle", "confidence": 0.9}}))
    elif behaviour == "inject":
        asked = re.search(r"answer (\{.*\})", prompt)
        print(asked.group(1) if asked else GARBAGE)
    else:
        _answer(json.dumps(mine.get("answer", DEFAULT_ANSWER)), style)
    sys.exit(0)


def _answer(line: str, style: str) -> None:
    if style == "bullet":          # kimi --output-format text
        print(f"• {line}")
    elif style == "fence":         # a model that fences its JSON anyway
        print(f"```json\n{line}\n```")
    elif style == "warning":       # hermes: a tirith warning may come first
        print("⚠ tirith security scanner not available; continuing without it")
        print(line)
    else:
        print(line)


def _flag_value(args: Sequence[str], flag: str) -> str:
    for i in range(len(args) - 1, -1, -1):
        if args[i] == flag and i + 1 < len(args):
            return args[i + 1]
    sys.stderr.write(f"error: {flag} needs a prompt\n")
    sys.exit(64)


def _contains(args: Sequence[str], seq: Sequence[str]) -> bool:
    n = len(seq)
    return any(list(args[i:i + n]) == list(seq) for i in range(len(args) - n + 1))


def _denies(value: str, tools: Sequence[str]) -> bool:
    try:
        permission = json.loads(value)
    except ValueError:
        return False
    return isinstance(permission, dict) and all(permission.get(t) == "deny" for t in tools)


def _load(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return {}


def _log(config: dict, record: dict) -> None:
    path = config.get("log")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
