"""`pitcrew doctor`: checks the machine and says, per item, what to fix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from pitcrew.supervisor import __version__
from pitcrew.supervisor.service.app_context import AppContext

MARKS = {"ok": "✓", "warn": "!", "fail": "✗"}


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    level: str      # ok | warn | fail
    detail: str

    @property
    def mark(self) -> str:
        return MARKS[self.level]

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "level": self.level, "detail": self.detail}


def run_checks(ctx: AppContext) -> list[Check]:
    checks = [Check("pitcrew", "ok", f"{__version__} on Python {sys.version.split()[0]}")]
    checks.append(_tmux(ctx))
    checks.append(_files(ctx))
    checks.append(_log(ctx))
    checks.append(_config(ctx))
    checks.append(_providers(ctx))
    checks.append(_agents(ctx))
    checks.append(_display())
    checks.append(_session_bus())
    return checks


def _tmux(ctx: AppContext) -> Check:
    exe = shutil.which(ctx.tmux.binary)
    if exe is None:
        return Check("tmux", "fail", "not installed; install it (Debian: apt install tmux, "
                     "macOS: brew install tmux)")
    try:
        version = subprocess.run([exe, "-V"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = "tmux (version unknown)"
    running = ctx.tmux.server_alive()
    server = f"server {ctx.tmux.label} " + ("running" if running else "not running yet")
    return Check("tmux", "ok", f"{version.strip()}; {server}")


def _files(ctx: AppContext) -> Check:
    folder = ctx.paths.data_dir
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".doctor-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        return Check("data folder", "fail", f"{folder} is not writable: {exc.strerror}")
    return Check("data folder", "ok", str(folder))


def _log(ctx: AppContext) -> Check:
    """Where to look when something went wrong (not in the data folder: with platformdirs
    it is the per-user state/log folder; with PITCREW_HOME, its logs/ folder)."""
    path = ctx.paths.log_file
    there = path          # the log opens at its first record: its folder may not exist yet
    while not there.exists() and there.parent != there:
        there = there.parent
    if not os.access(there, os.W_OK):
        return Check("log file", "warn", f"{path} cannot be written; Pitcrew logs nothing")
    return Check("log file", "ok", str(path))


def _config(ctx: AppContext) -> Check:
    path = ctx.paths.config_file
    mine = [p for p in ctx.problems if p.startswith(path.name)]
    if mine:
        return Check("config", "warn", "; ".join(mine))
    return Check("config", "ok", f"{path}" + ("" if path.exists() else " (defaults; no file yet)"))


def _providers(ctx: AppContext) -> Check:
    count = len(ctx.registry.providers)
    if ctx.registry.errors:
        return Check("providers", "warn",
                     f"{count} loaded; " + "; ".join(ctx.registry.errors))
    return Check("providers", "ok", f"{count} loaded "
                 f"(user files: {ctx.paths.user_providers_dir})")


def _agents(ctx: AppContext) -> Check:
    installed = [p.name for p in ctx.registry if shutil.which(p.launch.argv.argv[0])]
    if not installed:
        return Check("agent CLIs", "warn", "none of the known agent CLIs is on PATH")
    return Check("agent CLIs", "ok", "installed: " + ", ".join(installed))


def _display() -> Check:
    if sys.platform in ("darwin", "win32"):
        return Check("display", "ok", "desktop session")
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        which = os.environ.get("WAYLAND_DISPLAY") or os.environ.get("DISPLAY")
        return Check("display", "ok", f"{which}: the tray app can start")
    return Check("display", "warn", "no DISPLAY/WAYLAND_DISPLAY: only `pitcrew watch` "
                 "(headless) can run here")


def _session_bus() -> Check:
    if sys.platform in ("darwin", "win32"):
        return Check("notifications", "ok", "native notification center")
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return Check("notifications", "ok", "session bus found")
    return Check("notifications", "warn", "no DBus session bus: notifications become log "
                 "lines")
