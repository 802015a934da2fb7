"""Small kit for capturing real agent-CLI screens in an isolated tmux server.

Used by the capture_<cli>.py scripts in this folder to refresh the fixtures under
tests/fixtures/. Not imported by the test suite itself. Each CLI runs with a throwaway HOME
so nothing of the developer's own setup leaks in or gets changed.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
SCREENS = FIXTURES / "screens"


class Tmux:
    """One isolated tmux server (`tmux -L <socket> -f /dev/null`)."""

    def __init__(self, socket: str | None = None, width: int = 120, height: int = 40) -> None:
        self.socket = socket or f"pitcrew-capture-{os.getpid()}"
        self.width = width
        self.height = height

    def run(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True, text=True, errors="backslashreplace",
        )
        if check and proc.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def new_pane(self, command: str, cwd: str, env: dict[str, str] | None = None,
                 name: str = "cap") -> str:
        """Start `command` (a shell string) in a new session; return the pane id."""
        env_args: list[str] = []
        for key, value in (env or {}).items():
            env_args += ["-e", f"{key}={value}"]
        out = self.run(
            "new-session", "-d", "-P", "-F", "#{pane_id}", "-s", name,
            "-x", str(self.width), "-y", str(self.height), "-c", cwd, *env_args, command,
        )
        pane = out.strip()
        self.run("set-option", "-t", pane, "remain-on-exit", "on")
        return pane

    def capture(self, pane: str, ansi: bool = False) -> str:
        args = ["capture-pane", "-p", "-J", "-t", pane]
        if ansi:
            args.insert(2, "-e")
        return self.run(*args)

    def send_text(self, pane: str, text: str) -> None:
        self.run("send-keys", "-t", pane, "-l", text)

    def send_keys(self, pane: str, *keys: str) -> None:
        self.run("send-keys", "-t", pane, *keys)

    def pane_pid(self, pane: str) -> int:
        return int(self.run("display-message", "-p", "-t", pane, "#{pane_pid}").strip())

    def wait_for(self, pane: str, needle: str, timeout: float = 30.0) -> str:
        """Poll until `needle` is on screen; return the screen (raise with it on timeout)."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture(pane)
            if needle in screen:
                return screen
            time.sleep(0.3)
        raise TimeoutError(f"{needle!r} not on screen after {timeout}s:\n{screen}")

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def throwaway_home(prefix: str) -> Path:
    home = Path(tempfile.mkdtemp(prefix=f"pitcrew-{prefix}-home-"))
    return home


def process_tree(pid: int) -> list[dict[str, object]]:
    """Name, exe and argv of the pane's process and all its descendants (needs psutil)."""
    import psutil

    root = psutil.Process(pid)
    rows = []
    for proc in [root, *root.children(recursive=True)]:
        try:
            rows.append({"pid": proc.pid, "ppid": proc.ppid(), "name": proc.name(),
                         "exe": proc.exe(), "cmdline": proc.cmdline()})
        except psutil.Error:
            continue
    return rows


def save_screen(provider: str, name: str, text: str, *, state: str, source: str,
                ansi: str | None = None, reported: bool = False,
                timezone: str = "UTC", captured_at: dt.datetime | None = None,
                **extra: object) -> Path:
    """Write `<name>.screen` (+ `.ansi`) and its `.toml` metadata (fixtures/screens/FORMAT.md)."""
    folder = SCREENS / ("reported" if reported else "") / provider
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{state}__{name}"
    (folder / f"{stem}.screen").write_text(text, encoding="utf-8")
    if ansi is not None:
        (folder / f"{stem}.ansi").write_text(ansi, encoding="utf-8")
    at = captured_at or dt.datetime.now(dt.UTC).replace(microsecond=0)
    meta = {
        "provider": provider, "state": state,
        "origin": "reported" if reported else "captured",
        "source": source, "captured_at": at.isoformat(), "timezone": timezone, **extra,
    }
    (folder / f"{stem}.toml").write_text(_toml(meta), encoding="utf-8")
    return folder / f"{stem}.screen"


def save_processes(provider: str, rows: list[dict[str, object]], note: str) -> Path:
    folder = FIXTURES / "processes"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{provider}.json"
    path.write_text(json.dumps({"note": note, "processes": rows}, indent=2) + "\n")
    return path


def _toml(meta: dict[str, object]) -> str:
    lines = []
    for key, value in meta.items():
        if value is None:
            continue
        if key in ("captured_at", "reset_at") and isinstance(value, str):
            lines.append(f"{key} = {value}")
        elif isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, (int, float)):
            lines.append(f"{key} = {value}")
        elif isinstance(value, dt.datetime):
            lines.append(f"{key} = {value.isoformat()}")
        else:
            lines.append(f"{key} = {json.dumps(str(value), ensure_ascii=False)}")
    return "\n".join(lines) + "\n"
