"""Capture one screen of a real CLI started fresh: a throwaway HOME, a private tmux server, no
network; optionally some keys. Writes the screen, its ANSI twin and tmux's cursor as JSON.

Used for the first-start screens (trust, sign-in and provider pickers, the empty home box, a
typed draft, a command palette) of older and newer CLI versions at 80 and 200 columns::

    .venv/bin/python tests/capture/capture_first_start.py \\
        '{"cli": "opencode", "setdir": "/tmp/i12-cli/set-old", "width": 80, "height": 30,
          "wait": 10, "keys": ["lit:fix the flaky test in utils"]}' out.json

`setdir/<cli>/node_modules/.bin/<cli>` is the CLI (npm install --prefix). Keys are tmux key
names, "lit:<text>" for literal text, or a number of seconds to wait. Every process started
(the pane's tree, and anything else running with the throwaway HOME) is killed by PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SOCKET = f"cap-first-start-{os.getpid()}"


def tmux(*args: str, check: bool = True) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null", *args],
                          capture_output=True, text=True, check=check).stdout


def _kill_home(home: Path, root_pid: int) -> None:
    victims = [root_pid]
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            env = (proc / "environ").read_bytes().split(b"\0")
            if f"HOME={home}".encode() in env:
                victims.append(int(proc.name))
    subprocess.run(["pkill", "-KILL", "-P", str(root_pid)], capture_output=True, check=False)
    for pid in victims:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def run(cli: str, setdir: str, width: int, height: int, wait: float,
        keys: tuple[Any, ...] = (), env: dict[str, str] | None = None) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix=f"first-start-{cli}-"))
    work = home / "work"
    work.mkdir()
    binary = Path(setdir) / cli / "node_modules" / ".bin" / cli
    full_env = {"HOME": str(home), "DISABLE_AUTOUPDATER": "1", "TERM": "xterm-256color",
                "LANG": "C.UTF-8", "PATH": os.environ["PATH"], "COLORTERM": "truecolor",
                "NPM_CONFIG_PREFIX": str(home / ".npm-global"), **(env or {})}
    env_args = [arg for k, v in full_env.items() for arg in ("-e", f"{k}={v}")]
    pane = tmux("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "cap", "-x", str(width),
                "-y", str(height), "-c", str(work), *env_args, str(binary)).strip()
    tmux("set-option", "-t", pane, "remain-on-exit", "on")
    root = int(tmux("display-message", "-p", "-t", pane, "#{pane_pid}").strip())
    try:
        time.sleep(wait)
        for key in keys:
            if isinstance(key, (int, float)):
                time.sleep(key)
            elif key.startswith("lit:"):
                tmux("send-keys", "-t", pane, "-l", key[4:])
            else:
                tmux("send-keys", "-t", pane, key)
            time.sleep(0.6)
        time.sleep(1.5)
        text = tmux("capture-pane", "-p", "-J", "-t", pane)
        ansi = tmux("capture-pane", "-p", "-e", "-J", "-t", pane)
        cursor = tmux("display-message", "-p", "-t", pane, "#{cursor_x} #{cursor_y}").split()
    finally:
        _kill_home(home, root)
        tmux("kill-server", check=False)
        shutil.rmtree(home, ignore_errors=True)
    return {"text": text, "ansi": ansi, "cursor": cursor, "width": width, "height": height}


def main() -> int:
    spec = json.loads(sys.argv[1])
    spec["keys"] = tuple(spec.get("keys", ()))
    Path(sys.argv[2]).write_text(json.dumps(run(**spec)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
