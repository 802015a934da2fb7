"""Shared driver for capture_opencode.py, capture_copilot.py and capture_qwen.py.

Builds on capkit (which it does not change): one isolated tmux server, a throwaway HOME, the
OpenAI-compatible stand-in (standin_openai_chat.Server) on a random loopback port, and helpers
to start a CLI in a pane (inside a login-less ``bash --norc`` so a dead agent leaves a shell
prompt, like a real user pane), wait for text, and save a screen with both the plain and the
ANSI capture plus honest metadata.

Not imported by the test suite.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import capkit
from standin_openai_chat import Server

TIMEZONE = "UTC"
REALCLI = Path(os.environ.get("PITCREW_REALCLI", "/tmp/realcli2"))


def local_zone() -> str:
    """IANA name of the machine's zone (from /etc/localtime), for the fixtures' `timezone`."""
    try:
        target = os.readlink("/etc/localtime")
        name = target.split("zoneinfo/", 1)[1]
        return "UTC" if name in ("Etc/UTC", "UTC", "Etc/Universal") else name
    except (OSError, IndexError):
        return "UTC"


def ensure_installed(name: str, package: str) -> Path:
    """`npm install --prefix $PITCREW_REALCLI/<name> <package>` unless already there."""
    prefix = REALCLI / name
    if not (prefix / "node_modules" / ".bin").exists():
        env = {**os.environ, "NPM_CONFIG_PREFIX": str(REALCLI / "npmprefix"),
               "DISABLE_AUTOUPDATER": "1"}
        subprocess.run(["npm", "install", "--prefix", str(prefix), package], check=True, env=env)
    return prefix / "node_modules" / ".bin"


Needle = str | re.Pattern[str] | Callable[[str], bool]


def _matches(screen: str, needle: Needle) -> bool:
    if isinstance(needle, str):
        return needle in screen
    if isinstance(needle, re.Pattern):
        return needle.search(screen) is not None
    return needle(screen)


class Session:
    """One capture run for one CLI: tmux server + stand-in + throwaway HOME."""

    def __init__(self, provider: str, version: str, script: str, *,
                 out_filter: Iterable[str] = (), notes: dict[str, str] | None = None) -> None:
        self.provider = provider
        self.version = version
        self.script = script
        self.tmux = capkit.Tmux(socket=f"pitcrew-capb-{provider}-{os.getpid()}")
        self.home = capkit.throwaway_home(provider)
        self.npm_prefix = self.home / ".npm-prefix"
        self.server = Server(0, log_path=self.home / "standin-requests.jsonl")
        self.server.__enter__()
        self.only = set(out_filter)
        self.notes = notes or {}  # default `notes` per fixture stem (used when shot() has none)
        self.saved: list[Path] = []
        self.zone = local_zone()
        self._panes = 0
        # A session that outlives the others: tmux exits when its last session closes, and a
        # new-session racing that exit fails with "server exited unexpectedly".
        self.tmux.run("new-session", "-d", "-s", "keeper", "-x", "80", "-y", "24",
                      "sleep 86400")

    # -- environment -------------------------------------------------------------------------
    def base_env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "DISABLE_AUTOUPDATER": "1",
                "NPM_CONFIG_PREFIX": str(self.npm_prefix), "TERM": "xterm-256color",
                "COLORTERM": "truecolor", "LANG": "C.UTF-8", "TZ": self.zone,
                "PATH": os.environ.get("PATH", "/usr/bin:/bin")}

    def workdir(self, name: str) -> Path:
        path = self.home / "work" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    # -- panes -------------------------------------------------------------------------------
    def start(self, command: str, cwd: Path, env: dict[str, str] | None = None, *,
              width: int = 120, height: int = 40, shell: bool = True) -> str:
        """Start `command` in a fresh tmux session; inside `bash --norc` when `shell`."""
        self._panes += 1
        self.tmux.width, self.tmux.height = width, height
        full_env = {**self.base_env(), **(env or {})}
        if shell:
            full_env["PS1"] = "user@host:\\w$ "
        # tmux's own PATH wins over `new-session -e PATH=…`, so set the env in the command.
        prefix = "exec env " + " ".join(shlex.quote(f"{k}={v}") for k, v in full_env.items())
        if shell:
            pane = self.tmux.new_pane(f"{prefix} bash --norc --noprofile", str(cwd),
                                      name=f"s{self._panes}")
            self.wait(pane, "user@host:", timeout=10)
            self.tmux.send_text(pane, command)
            self.tmux.send_keys(pane, "Enter")
        else:
            pane = self.tmux.new_pane(f"{prefix} {command}", str(cwd), name=f"s{self._panes}")
        return pane

    def close(self, pane: str) -> None:
        """Kill the pane's whole process tree by PID (tmux kill-server does not always)."""
        with contextlib.suppress(RuntimeError, ValueError):
            kill_tree(self.tmux.pane_pid(pane))
        self.tmux.run("kill-pane", "-t", pane, check=False)

    def wait(self, pane: str, needle: Needle, timeout: float = 40.0,
             absent: Needle | None = None) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.tmux.capture(pane)
            if _matches(screen, needle) and (absent is None or not _matches(screen, absent)):
                return screen
            time.sleep(0.25)
        raise TimeoutError(f"{needle!r} not on screen after {timeout}s:\n{screen}")

    def settle(self, pane: str, quiet: float = 1.5, timeout: float = 15.0) -> str:
        """Wait until the screen stops changing for `quiet` seconds (spinners never do)."""
        last = self.tmux.capture(pane)
        since = time.monotonic()
        deadline = since + timeout
        while time.monotonic() < deadline:
            time.sleep(0.25)
            now = self.tmux.capture(pane)
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
        return last

    def type(self, pane: str, text: str, enter: bool = False) -> None:
        self.tmux.send_text(pane, text)
        if enter:
            time.sleep(0.3)
            self.tmux.send_keys(pane, "Enter")

    def keys(self, pane: str, *keys: str) -> None:
        self.tmux.send_keys(pane, *keys)

    def agent_pid(self, pane: str, names: tuple[str, ...]) -> int | None:
        """PID of the first descendant of the pane whose name or argv mentions one of `names`."""
        for row in capkit.process_tree(self.tmux.pane_pid(pane))[1:]:
            argv: Any = row["cmdline"]
            text = f"{row['name']} {' '.join(str(a) for a in argv)}"
            if any(n in text for n in names):
                return int(str(row["pid"]))
        return None

    def dead_status(self, pane: str, timeout: float = 20.0) -> str:
        """Wait for the pane's process to be reaped; return its exit status or signal."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead, status, sig = (self.tmux.run(
                "display-message", "-p", "-t", pane,
                "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}").strip().split("|"))
            if dead == "1" and (status or sig):
                return f"status {status}" if status else f"signal {sig}"
            time.sleep(0.3)
        return "not reaped"

    # -- saving ------------------------------------------------------------------------------
    def wanted(self, slug: str) -> bool:
        return not self.only or any(o in slug for o in self.only)

    def shot(self, pane: str, state: str, slug: str, how: str, *,
             screen: str | None = None, **extra: Any) -> Path:
        """Save the pane now (or `screen`, already captured) as `<state>__<slug>`."""
        if "notes" not in extra and f"{state}__{slug}" in self.notes:
            extra["notes"] = self.notes[f"{state}__{slug}"]
        text = screen if screen is not None else self.tmux.capture(pane)
        ansi = self.tmux.capture(pane, ansi=True)
        size = f"{self.tmux.width}x{self.tmux.height}"
        source = f"{self.provider} {self.version}, tests/capture/{self.script}, {size}, {how}"
        path = capkit.save_screen(self.provider, slug, text, state=state, source=source,
                                  ansi=ansi, timezone=self.zone,
                                  captured_at=dt.datetime.now(dt.UTC).replace(
                                      microsecond=0), **extra)
        self.saved.append(path)
        print(f"  saved {path.relative_to(capkit.SCREENS)}", flush=True)
        return path

    def finish(self) -> None:
        for line in self.tmux.run("list-panes", "-a", "-F", "#{pane_id}", check=False).split():
            self.close(line)
        self.tmux.kill()
        self.server.close()


def kill_tree(pid: int) -> None:
    """SIGKILL a process and all its descendants, by PID."""
    import psutil

    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return
    procs = [*root.children(recursive=True), root]
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGKILL)
    psutil.wait_procs(procs, timeout=5)


def copy_tree_sample(src: Path, dst: Path, *, keep: Callable[[Path], bool],
                     rewrite: Callable[[str], str] | None = None) -> list[Path]:
    """Copy the files under `src` for which `keep(rel)` holds into `dst`, same layout."""
    copied = []
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_file() and keep(rel):
            target = dst / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if rewrite is not None and path.suffix in (".json", ".jsonl", ".yaml", ".md", ".txt"):
                target.write_text(rewrite(path.read_text(errors="replace")))
            else:
                shutil.copy2(path, target)
            copied.append(target)
    return copied


def run_help(binary: str, args_list: list[list[str]], env: dict[str, str]) -> str:
    """Text block like /work/shared/reference/cli-help: `$ cmd` / output / `[exit code: N]`."""
    chunks = []
    name = Path(binary).name
    for args in args_list:
        proc = subprocess.run([binary, *args], capture_output=True, text=True, env=env,
                              timeout=60)
        chunks.append(f"$ {name} {shlex.join(args)}\n{proc.stdout}{proc.stderr}"
                      f"[exit code: {proc.returncode}]\n")
    return "\n".join(chunks)


def exit_probe(s: Session, command: str, cwd: Path, env: dict[str, str], ready: Needle,
               steps: list[str], *, slug: str, state: str = "crashed",
               alive_state: str = "idle", how: str = "") -> str:
    """Run `command` as the pane's own process, perform `steps`, return how it ended.

    Steps: ``text:<literal>``, ``sleep:<seconds>``, or a tmux key name (``Enter``, ``C-c``).
    The dead pane (tmux remain-on-exit) is saved as ``<state>__<slug>``.
    """
    pane = s.start(command, cwd, env, shell=False)
    s.wait(pane, ready, timeout=120)
    time.sleep(2)
    for step in steps:
        if step.startswith("text:"):
            s.tmux.send_text(pane, step[5:])
        elif step.startswith("sleep:"):
            time.sleep(float(step[6:]))
        else:
            s.keys(pane, step)
    status = s.dead_status(pane, timeout=90)
    time.sleep(0.5)
    if status == "not reaped":  # it did not exit: label what is on screen instead
        state, slug = alive_state, slug.replace("pane_dead_", "") + "_did_not_exit"
    s.shot(pane, state, slug, f"{how or ' '.join(steps)} with the CLI as the pane's command",
           notes=f"tmux reports: {status} (remain-on-exit), 90 s after the keys.")
    s.close(pane)
    return status
