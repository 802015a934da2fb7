"""Which agent runs in a pane, from the pane's real process tree (psutil).

A pane's own process is usually a shell; the agent is a descendant, and may be wrapped by an
interpreter (`node …/cli.js`, `python -m …`). Providers say how to recognise theirs
(`process.names`, `process.argv`); the shallowest match wins, so an agent that runs another
CLI as a tool is still named for itself. Processes that vanish mid-walk are skipped, never an
error.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable
from dataclasses import dataclass

import psutil

from pitcrew.supervisor.providers.model import ProcessMatch, Provider

ARGV_DEPTH = 4  # argv patterns look at argv[0..3]: interpreter, its flags, the script


@dataclass(frozen=True, slots=True)
class ProcInfo:
    pid: int
    ppid: int
    name: str
    exe: str
    cmdline: tuple[str, ...]
    cwd: str
    create_time: float
    depth: int

    @property
    def alive(self) -> bool:
        return is_alive(self.pid, self.create_time)


def _info(proc: psutil.Process, depth: int) -> ProcInfo | None:
    try:
        with proc.oneshot():
            name = proc.name()
            cmdline = tuple(proc.cmdline())
            create_time = proc.create_time()
            ppid = proc.ppid()
            if proc.status() == psutil.STATUS_ZOMBIE:
                return None
        try:
            exe = proc.exe()
        except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
            exe = ""
        try:
            cwd = proc.cwd()
        except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
            cwd = ""
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
        return None
    return ProcInfo(proc.pid, ppid, name, exe, cmdline, cwd, create_time, depth)


def process_tree(pid: int) -> list[ProcInfo]:
    """The process `pid` and all its descendants, breadth first (shallowest first)."""
    try:
        root = psutil.Process(pid)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return []
    out: list[ProcInfo] = []
    frontier = [(root, 0)]
    while frontier:
        proc, depth = frontier.pop(0)
        info = _info(proc, depth)
        if info is None:
            continue
        out.append(info)
        try:
            children = proc.children()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            children = []
        frontier.extend((child, depth + 1) for child in children)
    return out


def matches(proc: ProcInfo, rule: ProcessMatch) -> bool:
    candidates = {proc.name, os.path.basename(proc.exe)}
    if proc.cmdline:
        candidates.add(os.path.basename(proc.cmdline[0]))
    if any(name in candidates for name in rule.names):
        return True
    head = proc.cmdline[:ARGV_DEPTH]
    return any(rx.search(arg) for rx in rule.argv for arg in head)


def find_agent(
    procs: Iterable[ProcInfo], providers: Iterable[Provider]
) -> tuple[Provider, ProcInfo] | None:
    """The shallowest process in the tree that some provider recognises."""
    ordered = sorted(procs, key=lambda p: p.depth)
    plist = list(providers)
    for proc in ordered:
        for provider in plist:
            if matches(proc, provider.process):
                return provider, proc
    return None


def provider_for_command(command: str, providers: Iterable[Provider]) -> Provider | None:
    """Guess the provider from a command line string (a dead pane's start command)."""
    words = command.replace('"', " ").replace("'", " ").split()
    if not words:
        return None
    fake = ProcInfo(0, 0, os.path.basename(words[0]), "", tuple(words), "", 0.0, 0)
    for provider in providers:
        if matches(fake, provider.process) or any(
            os.path.basename(w) in provider.process.names for w in words[:ARGV_DEPTH]
        ):
            return provider
    return None


def environ(pid: int) -> dict[str, str]:
    """The process's environment (HOME, CLAUDE_CONFIG_DIR, …); {} when it cannot be read."""
    try:
        return dict(psutil.Process(pid).environ())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
        return {}


def is_alive(pid: int, create_time: float | None = None) -> bool:
    """True while `pid` runs — and is still the same process when `create_time` is given."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return create_time is None or abs(proc.create_time() - create_time) < 0.01
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False


def stop_tree(pid: int, grace: float = 3.0) -> None:
    """SIGTERM the process and its children, wait, then SIGKILL what is left."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        with contextlib.suppress(OSError):
            os.kill(proc.pid, signal.SIGKILL)
