"""What each `pitcrew` subcommand does. Output words and JSON keys are a stable interface."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import logging
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pitcrew.supervisor.adapters.clock import local_zone, now_utc
from pitcrew.supervisor.core.attention import Signals, assess, rank, waited
from pitcrew.supervisor.core.errors import PitcrewError
from pitcrew.supervisor.service.app_context import AppContext, load_context
from pitcrew.supervisor.service.scan import Terminal, scan

if TYPE_CHECKING:
    from pitcrew.supervisor.providers.model import Provider

log = logging.getLogger("pitcrew")


def _context(args: argparse.Namespace, quiet: bool = False) -> AppContext:
    ctx = load_context(args.tmux_socket)
    if not quiet:
        for problem in ctx.problems:
            print(f"pitcrew: {problem}", file=sys.stderr)
    return ctx


def _dump(data: object) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


# -- status ------------------------------------------------------------------------------

def status(args: argparse.Namespace) -> int:
    """Every agent terminal, needs-you first (the oldest need first), then working, done,
    idle, stopped (core/attention.py); attention, since and why come from the running
    watcher's view when one publishes it, else from this one reading (no since, no done)."""
    ctx = _context(args)
    only = getattr(args, "host", None)
    if ctx.config.hosts or only not in (None, "local"):   # with remote hosts: a HOST column
        from pitcrew.supervisor.cli import host_cmds  # ssh and remote scans: only here

        remotes = host_cmds.remote_scans(ctx.config.hosts, ctx.active_providers, only)
        running = only not in (None, "local") or ctx.tmux.server_alive()
        local = (scan(ctx.tmux, ctx.active_providers, now_utc(), local_zone()) if running
                 else []) if only in (None, "local") else None
        looks = _Attention(ctx)
        remotes = [dataclasses.replace(r, terminals=tuple(sorted(r.terminals, key=looks.rank)))
                   for r in remotes]
        host_cmds.print_status(sorted(local, key=looks.rank) if local else local,
                               ctx.tmux.label, running, remotes, args.json, looks.row,
                               looks.json)
        return 0
    if not ctx.tmux.server_alive():
        if args.json:
            _dump({"server": ctx.tmux.label, "server_running": False, "terminals": []})
        else:
            print(f"No tmux server is running ({ctx.tmux.label}); no agent terminals.")
        return 0
    looks = _Attention(ctx)
    terminals = sorted(scan(ctx.tmux, ctx.active_providers, now_utc(), local_zone()),
                       key=looks.rank)
    if args.json:
        _dump({"server": ctx.tmux.label, "server_running": True,
               "terminals": [looks.json(t) for t in terminals]})
        return 0
    if not terminals:
        print(f"No agent terminals on tmux server {ctx.tmux.label}.")
        return 0
    _table(
        ["PANE", "TARGET", "AGENT", "PID", "STATE", "ATTENTION", "SESSION", "CWD"],
        [looks.row(t) for t in terminals],
    )
    return 0


class _Attention:
    """Each scanned terminal's attention: the watcher's (published) when it runs, else the
    rule on this one reading."""

    def __init__(self, ctx: AppContext) -> None:
        from pitcrew.supervisor.cli.published import terminals

        self.published = terminals(ctx.paths.data_dir) or {}
        self.now = dt.datetime.now().timestamp()
        self._seen: dict[int, tuple[str, float | None, str]] = {}

    def of(self, t: Terminal) -> tuple[str, float | None, str]:
        """(attention, since, why) of `t`."""
        if id(t) in self._seen:
            return self._seen[id(t)]
        row = self.published.get(f"{t.server}:{t.pane_id}") if t.host == "local" else None
        if row is not None and isinstance(row.get("attention"), str):
            since = row.get("since")
            found = (row["attention"], float(since) if isinstance(since, int | float) else None,
                     str(row.get("why") or ""))
        else:
            a = assess(None, Signals("exited" if t.dead else t.state,
                                     t.screen.evidence if t.screen else "",
                                     alive=not t.dead and t.agent_pid is not None), self.now)
            found = (a.attention.value, None, a.why)
        self._seen[id(t)] = found
        return found

    def rank(self, t: Terminal) -> tuple[int, float]:
        return rank(*self.of(t)[:2])

    def json(self, t: Terminal) -> dict[str, object]:
        attention, since, why = self.of(t)
        return {**t.to_json(), "attention": attention, "since": since, "why": why}

    def row(self, t: Terminal) -> list[str]:
        attention, since, _ = self.of(t)
        shown = attention.replace("_", " ")
        wait = waited(since, self.now)
        return [*_row(t)[:5], f"{shown} {wait}" if wait else shown, *_row(t)[5:]]


def _row(t: Terminal) -> list[str]:
    state = t.state
    if t.dead:
        state = f"exited ({t.dead_status})" if t.dead_status is not None else "exited"
    return [t.pane_id, t.target, t.provider, str(t.agent_pid or "-"), state,
            (t.session_id or "-")[:36], t.cwd]


def _table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())


# -- classify ----------------------------------------------------------------------------

def classify(args: argparse.Namespace) -> int:
    from pitcrew.supervisor.core.classifier import classify as classify_screen
    from pitcrew.supervisor.core.classifier import explain as explain_screen

    ctx = _context(args, quiet=True)
    if args.provider:
        provider = ctx.registry.get(args.provider)
        if provider is None:
            raise PitcrewError(
                f"unknown provider {args.provider!r} (see `pitcrew providers`)"
            )
        rules = provider.screen
    else:
        rules = ctx.registry.generic_screen
    text = _read_text(args.file)
    local: dt.tzinfo = local_zone()
    if args.tz:
        try:
            local = ZoneInfo(args.tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise PitcrewError(f"--tz: unknown time zone {args.tz!r}") from None
    now = now_utc()
    if args.now:
        try:
            now = dt.datetime.fromisoformat(args.now)
        except ValueError:
            raise PitcrewError(f"--now: not an ISO date-time: {args.now!r}") from None
        if now.tzinfo is None:
            now = now.replace(tzinfo=local)
    cursor = _cursor(args.cursor)
    if args.explain:
        why = explain_screen(text, rules, now, local, cursor)
        if args.json:
            _dump({**why.result.to_json(), "decided_row": why.decided,
                   "fired": [{"row": f.row, "state": f.state, "pattern": f.pattern,
                              "line": f.text, "note": f.note, "won": why.won(f),
                              "lost_why": "" if why.won(f) else why.lost_why(f)}
                             for f in why.fired],
                   "steps": list(why.steps)})
        else:
            print(why.render())
        return 0
    result = classify_screen(text, rules, now, local, cursor)
    if args.json:
        _dump(result.to_json())
    else:
        print(result.state.value)
        if result.reset_at:
            print(f"resets at {result.reset_at.isoformat()}")
        if result.retry_after is not None:
            print(f"retry after {result.retry_after:g}s")
        if result.evidence:
            print(f"evidence: {result.evidence}")
    return 0


def _cursor(raw: str | None) -> tuple[int, int] | None:
    if not raw:
        return None
    try:
        x, y = (int(part) for part in raw.split(","))
    except ValueError:
        raise PitcrewError(f"--cursor: expected X,Y (two numbers), got {raw!r}") from None
    return x, y


def _read_text(name: str) -> str:
    if name == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(name).read_bytes()
        except OSError as exc:
            raise PitcrewError(f"cannot read {name}: {exc.strerror}") from None
    return data.decode("utf-8", "replace")


# -- providers ---------------------------------------------------------------------------

def provider_json(p: Provider) -> dict[str, object]:
    exe = p.launch.argv.argv[0]
    return {
        "name": p.name,
        "display_name": p.display_name,
        "executable": exe,
        "installed": shutil.which(exe) is not None,
        "supports": p.supports(),
        "resume": {
            "by_id": list(p.resume.by_id.argv) if p.resume.by_id else None,
            "latest": list(p.resume.latest.argv) if p.resume.latest else None,
            "unsupported": p.resume.unsupported,
        },
        "launch": list(p.launch.argv.argv),
        "sessions": p.sessions.glob or (p.sessions.sqlite.path if p.sessions.sqlite else None),
        "checker": list(p.checker.argv.argv) if p.checker else None,
        "continue_message": p.screen.continue_message,
        "verified": dict(p.verified),
        "source": str(p.source) if p.source else None,
    }


def providers(args: argparse.Namespace) -> int:
    ctx = _context(args)
    disabled = set(ctx.config.disabled_providers)
    plist = list(ctx.registry)
    if args.json:
        _dump({
            "providers": [{**provider_json(p), "disabled": p.name in disabled} for p in plist],
            "errors": list(ctx.registry.errors),
        })
        return 0
    rows = []
    for p in plist:
        j = provider_json(p)
        s = p.supports()
        if s["resume_by_id"] and s["resume_latest"]:
            resume = "session id, latest"
        elif s["resume_by_id"]:
            resume = "session id"
        elif s["resume_latest"]:
            resume = "latest only"
        else:
            resume = "cannot resume"
        rows.append([
            p.name, p.display_name, resume,
            "yes" if s["checker"] else "-",
            "yes" if s["session_files"] else "-",
            ("yes" if j["installed"] else "-") + (" (disabled)" if p.name in disabled else ""),
        ])
    _table(["NAME", "CLI", "RESUME", "CHECKER", "SESSION FILES", "INSTALLED"], rows)
    return 0


# -- doctor ------------------------------------------------------------------------------

def doctor(args: argparse.Namespace) -> int:
    from pitcrew.supervisor.cli import doctor as doctor_mod

    ctx = _context(args, quiet=True)
    checks = doctor_mod.run_checks(ctx)
    if args.json:
        _dump([c.to_json() for c in checks])
    else:
        for c in checks:
            print(f"{c.mark} {c.name}: {c.detail}")
    return 1 if any(c.level == "fail" for c in checks) else 0


# -- watch -------------------------------------------------------------------------------

def watch(args: argparse.Namespace) -> int:
    if args.once:
        return status(argparse.Namespace(**{**vars(args), "json": False}))
    from pitcrew.supervisor.cli.autopilot_cmds import watch as run_watch

    return run_watch(args)


# -- tray --------------------------------------------------------------------------------

def tray(args: argparse.Namespace) -> int:
    try:
        from pitcrew.desktop.app import run_tray
    except ImportError as exc:
        raise PitcrewError(f"the tray app cannot start: {exc}") from None
    return run_tray(tmux_socket=args.tmux_socket)
