"""The real agent CLIs in the test suite (tests/e2e/real/): where the pinned versions are
installed, a stand-in vendor API on 127.0.0.1 for them, and a throwaway HOME whose first-run
screens are settled by configuration files, not keystrokes.

scripts/test.sh installs the CLIs named in tests/e2e/real/clis.txt into
build/realcli/<dir>-<version>/ (scripts/lib.sh ensure_real_clis). Under
PITCREW_TEST_REQUIRE_DESKTOP=1 (scripts/test.sh, CI) a missing CLI fails its tests; otherwise
they are skipped with the command that installs it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
CLIS = REPO / "tests" / "e2e" / "real" / "clis.txt"
STANDINS = REPO / "tests" / "capture"
# Everything that would make a CLI reach beyond 127.0.0.1 or change itself, switched off.
# Claude Code 2.1.197, checked with `strace -f -e trace=connect`: with these its only
# connections are to ANTHROPIC_BASE_URL (without the last one a first start clones the
# official plugin marketplace from github.com over ssh).
QUIET_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
}


@dataclass(frozen=True)
class Cli:
    dir: str
    package: str
    version: str

    @property
    def prefix(self) -> Path:
        return REPO / "build" / "realcli" / f"{self.dir}-{self.version}"

    @property
    def bin_dir(self) -> Path:
        return self.prefix / "node_modules" / ".bin"

    @property
    def bin(self) -> Path:
        return self.bin_dir / self.dir


def pinned(name: str) -> Cli:
    for line in CLIS.read_text().splitlines():
        parts = line.split()
        if parts and not parts[0].startswith("#") and parts[0] == name:
            return Cli(*parts)
    raise KeyError(f"{name} is not in {CLIS}")


def require(name: str) -> Cli:
    """The pinned CLI, installed; a missing one skips the test, or fails it under
    PITCREW_TEST_REQUIRE_DESKTOP=1."""
    cli = pinned(name)
    if not (cli.bin.exists() and (cli.prefix / ".installed").exists()):
        why = (f"{cli.package}@{cli.version} is not installed in {cli.prefix} "
               "(bash scripts/test.sh installs it; or: source scripts/lib.sh && ensure_real_clis)")
        if os.environ.get("PITCREW_TEST_REQUIRE_DESKTOP") == "1":
            raise RuntimeError(why)
        pytest.skip(why)
    return cli


class Standin:
    """A stand-in vendor API (tests/capture/standin_*.py) on 127.0.0.1; every request it
    gets is a JSON line in `log`."""

    def __init__(self, script: str, log: Path, mode: str = "normal") -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, str(STANDINS / script), "--port", "0", "--mode", mode,
             "--log", str(log)], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        match = re.match(r"PORT=(\d+)", line)
        if not match:
            self.stop()
            raise RuntimeError(f"stand-in {script} did not start: {line!r}")
        self.url = f"http://127.0.0.1:{match.group(1)}"

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        if self.proc.stdout:
            self.proc.stdout.close()


@contextlib.contextmanager
def standin(script: str, log: Path, mode: str = "normal") -> Iterator[Standin]:
    server = Standin(script, log, mode)
    try:
        yield server
    finally:
        server.stop()


def settle_claude(home: Path, cli: Cli, trusted: list[Path], key: str) -> None:
    """Claude Code's first-run screens answered in `home/.claude.json`: onboarding done, the
    folders trusted, the API key from the environment approved (it keeps the key's last 20
    characters)."""
    config = {
        "hasCompletedOnboarding": True, "theme": "dark", "lastOnboardingVersion": cli.version,
        "projects": {str(p): {"hasTrustDialogAccepted": True} for p in trusted},
        "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
    }
    (home / ".claude.json").write_text(json.dumps(config, indent=2))


def processes_named(root_pid: int, path: Path) -> list[psutil.Process]:
    """The processes under `root_pid` (itself included) running the executable `path`."""
    target = os.path.realpath(path)
    found = []
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(root_pid)
        for proc in [root, *root.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                if os.path.realpath(proc.exe()) == target:
                    found.append(proc)
    return found


def kill_home_processes(home: Path, timeout: float = 5.0) -> None:
    """SIGKILL whatever still runs with HOME=`home` (a CLI's helpers that left the pane's
    process tree), by pid."""
    victims = []
    for proc in psutil.process_iter(["pid"]):
        with contextlib.suppress(psutil.Error):
            if proc.pid != os.getpid() and proc.environ().get("HOME") == str(home):
                victims.append(proc)
    for proc in victims:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(victims, timeout=timeout)
