"""Shared helpers for capture_claude.py, capture_codex.py and capture_gemini.py.

Builds on capkit (which stays untouched): starts a stand-in API server, runs a CLI in an
isolated tmux server with a throwaway HOME, saves screens with consistent metadata, and
cleans up every process it started (by PID, never by name).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import capkit

HERE = Path(__file__).resolve().parent
REALCLI = Path(os.environ.get("PITCREW_REALCLI", "/tmp/realcli"))
PY = sys.executable


def local_tz_name() -> str:
    """IANA name of the machine's local zone (TZ env wins)."""
    if os.environ.get("TZ"):
        return os.environ["TZ"].lstrip(":")
    try:
        target = os.readlink("/etc/localtime")
        name = target.split("zoneinfo/", 1)[1]
        return "UTC" if name in ("Etc/UTC", "Etc/UCT", "UCT", "Zulu", "Etc/Zulu") else name
    except (OSError, IndexError):
        return "UTC"


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


class Standin:
    """A stand-in API server subprocess (one of the standin_*.py scripts)."""

    def __init__(self, script: str, log: Path, mode: str = "normal",
                 extra: list[str] | None = None, port: int = 0) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [PY, str(HERE / script), "--port", str(port), "--mode", mode, "--log", str(log),
             *(extra or [])],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        match = re.match(r"PORT=(\d+)", line)
        if not match:
            self.stop()
            raise RuntimeError(f"stand-in {script} did not start: {line!r}")
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def set_mode(self, mode: str) -> None:
        req = urllib.request.Request(f"{self.url}/_control/mode", data=mode.encode(),
                                     method="POST")
        urllib.request.urlopen(req, timeout=5).read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)


@dataclass
class Session:
    """One CLI under capture: a tmux server, a throwaway HOME, a work dir, an env."""

    provider: str
    version: str
    script: str
    width: int = 120
    height: int = 40
    home: Path = field(default_factory=Path)
    env: dict[str, str] = field(default_factory=dict)
    tmux: capkit.Tmux | None = None
    started_pids: list[int] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.home = capkit.throwaway_home(self.provider)
        self.npm_prefix = self.home / ".npm-global"
        self.env = {
            "HOME": str(self.home), "DISABLE_AUTOUPDATER": "1",
            "NPM_CONFIG_PREFIX": str(self.npm_prefix), "TERM": "xterm-256color",
            "LANG": "C.UTF-8", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }
        self.tmux = capkit.Tmux(socket=f"pitcrew-cap-{self.provider}-{os.getpid()}",
                                width=self.width, height=self.height)

    # -- panes ----------------------------------------------------------------------------

    def pane(self, command: str, cwd: Path | str, name: str, env: dict[str, str] | None = None,
             width: int | None = None, height: int | None = None) -> str:
        assert self.tmux
        self.tmux.width = width or self.width
        self.tmux.height = height or self.height
        pane = self.tmux.new_pane(command, str(cwd), {**self.env, **(env or {})}, name=name)
        self.started_pids.append(self.tmux.pane_pid(pane))
        return pane

    def shell_pane(self, cwd: Path | str, name: str, env: dict[str, str] | None = None,
                   width: int | None = None, height: int | None = None) -> str:
        """A pane running a plain interactive bash (PS1='$ '), like a user's terminal."""
        rc = self.home / ".pitcrew-bashrc"
        rc.write_text("PS1='$ '\n")
        return self.pane(f"bash --noprofile --rcfile {rc} -i", cwd, name, env, width, height)

    def screen(self, pane: str) -> str:
        assert self.tmux
        return self.tmux.capture(pane)

    def wait(self, pane: str, cond: str | Callable[[str], bool], timeout: float = 30.0,
             quiet: bool = False) -> str:
        """Poll until `cond` (substring or predicate) holds; return the screen."""
        test = (lambda s: cond in s) if isinstance(cond, str) else cond
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen(pane)
            if test(screen):
                return screen
            time.sleep(0.3)
        if quiet:
            return screen
        raise TimeoutError(f"{cond!r} not on screen after {timeout}s:\n{screen}")

    def type(self, pane: str, text: str, enter: bool = False) -> None:
        assert self.tmux
        self.tmux.send_text(pane, text)
        if enter:
            time.sleep(0.4)
            self.tmux.send_keys(pane, "Enter")

    def keys(self, pane: str, *keys: str) -> None:
        assert self.tmux
        self.tmux.send_keys(pane, *keys)

    def dead_status(self, pane: str, timeout: float = 20.0) -> int | None:
        """Wait for the pane to die and be reaped; return its exit status.

        A death by signal N is returned as 128+N (tmux shows `pane_dead_signal`, and
        `pane_dead_status` stays empty then).
        """
        assert self.tmux
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.tmux.run("display-message", "-p", "-t", pane,
                                "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}",
                                check=False).strip().split(":")
            if len(out) == 3 and out[0] == "1":
                if out[1]:
                    return int(out[1])
                if out[2]:
                    return 128 + int(out[2])
            time.sleep(0.3)
        return None

    def agent_pid(self, pane: str, names: tuple[str, ...]) -> int | None:
        """PID of the first descendant (or pane process) whose name is in `names`."""
        import psutil

        root = psutil.Process(self.tmux.pane_pid(pane))  # type: ignore[union-attr]
        for proc in [root, *root.children(recursive=True)]:
            try:
                if proc.name() in names or any(Path(a).name in names
                                               for a in proc.cmdline()[:2]):
                    return proc.pid
            except psutil.Error:
                continue
        return None

    # -- saving ---------------------------------------------------------------------------

    def shot(self, pane: str, slug: str, state: str, how: str, **extra: object) -> str:
        """Capture the pane now and save it as fixture `<state>__<slug>`."""
        assert self.tmux
        text = self.tmux.capture(pane)
        ansi = self.tmux.capture(pane, ansi=True)
        width = self.tmux.run("display-message", "-p", "-t", pane, "#{pane_width}x#{pane_height}")
        source = f"{self.provider} {self.version}, tests/capture/{self.script}, {how}"
        extra = {k: v for k, v in extra.items() if v is not None}
        notes = str(extra.pop("notes", "") or "")
        size = width.strip()
        notes = f"pane {size}. {notes}".strip()
        tz = str(extra.pop("timezone", None) or local_tz_name())
        capkit.save_screen(self.provider, slug, text, state=state, source=source, ansi=ansi,
                           timezone=tz, captured_at=now_utc(), notes=notes,
                           **cast(dict[str, Any], extra))
        self.saved.append(f"{state}__{slug}")
        print(f"  saved {state}__{slug}", flush=True)
        return text

    # -- cleanup --------------------------------------------------------------------------

    def kill_all(self) -> None:
        """Kill every process started in our panes (tree by PID), then the tmux server."""
        import psutil

        victims: list[psutil.Process] = []
        for pid in self.started_pids:
            try:
                root = psutil.Process(pid)
                victims += [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
        # Also processes that escaped the pane tree but still run with our throwaway HOME.
        for proc in psutil.process_iter(["pid", "environ"]):
            try:
                env = proc.info.get("environ") or {}
            except psutil.Error:
                continue
            if env.get("HOME") == str(self.home) and proc.pid != os.getpid():
                victims.append(proc)
        for proc in victims:
            with contextlib.suppress(psutil.Error):
                proc.send_signal(signal.SIGKILL)
        if self.tmux:
            self.tmux.kill()


def copy_session_sample(home: Path, rel: str, provider: str, max_lines: int = 6,
                        scrub: Callable[[str], str] | None = None) -> Path:
    """Copy HOME/<rel> into tests/fixtures/sessions/<provider>/<rel>, trimmed to max_lines."""
    src = home / rel
    dst = capkit.FIXTURES / "sessions" / provider / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    lines = src.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    out = []
    for line in lines[:max_lines]:
        line = line.replace(str(home) + "/", "/home/user/")
        out.append(scrub(line) if scrub else line)
    dst.write_text("".join(out), encoding="utf-8")
    return dst


def save_process_tree(provider: str, pid: int, note: str, home: Path) -> None:
    rows = capkit.process_tree(pid)
    for row in rows:
        row["cmdline"] = [str(a).replace(str(home), "/home/user")
                          for a in cast(list[str], row["cmdline"])]
    capkit.save_processes(provider, rows, note)


def write_json(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2))


def copy_help(provider: str, text: str) -> Path:
    dst = capkit.FIXTURES / "cli-help" / f"{provider}.txt"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(text, encoding="utf-8")
    return dst


def run_help(cmds: list[list[str]], env: dict[str, str], cwd: Path) -> str:
    """`$ cmd` / output / `[exit code: N]` blocks, like /work/shared/reference/cli-help."""
    parts = []
    for cmd in cmds:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
        shown = " ".join([Path(cmd[0]).name, *cmd[1:]])
        parts.append(f"$ {shown}\n{proc.stdout}{proc.stderr}[exit code: {proc.returncode}]\n")
    return "\n".join(parts)


def rmtree_quiet(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
