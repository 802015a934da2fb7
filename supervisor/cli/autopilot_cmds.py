"""`pitcrew watch`, `autopilot`, `ledger`, `hook` and `hooks`: Autopilot from the command line."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pitcrew.supervisor.api import view_file
from pitcrew.supervisor.api.build import incident_note
from pitcrew.supervisor.api.commands import ChangeState, Command
from pitcrew.supervisor.cli import claude_hooks
from pitcrew.supervisor.core.errors import PitcrewError
from pitcrew.supervisor.core.redact import redact
from pitcrew.supervisor.core.report_rows import printable, printable_json
from pitcrew.supervisor.core.settings import Mode
from pitcrew.supervisor.service.app_context import AppContext, load_context
from pitcrew.supervisor.service.autopilot import status_line
from pitcrew.supervisor.service.statebook import apply_change
from pitcrew.supervisor.store import config_edit, spool, state_store
from pitcrew.supervisor.store.ledger import Ledger, recordable
from pitcrew.supervisor.store.lock import SupervisorLock
from pitcrew.supervisor.store.paths import resolve


def lock_for(ctx: AppContext) -> SupervisorLock:
    return SupervisorLock(ctx.paths.data_dir / "supervisor.lock")


def watch(args: argparse.Namespace) -> int:
    import logging

    from pitcrew.supervisor.adapters.notifier import default_gate
    from pitcrew.supervisor.service.loop import Supervisor

    ctx = load_context(args.tmux_socket)
    log = logging.getLogger("pitcrew")
    for problem in ctx.problems:
        log.warning("%s", problem)
    lock = lock_for(ctx)
    holder = lock.acquire("pitcrew watch")
    if holder is not None:
        raise PitcrewError(f"another Pitcrew supervisor is already running: {holder.describe()}")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    log.info("watching tmux server %s; Ctrl-C to stop", ctx.tmux.label)
    supervisor: list[Supervisor] = []
    gate = default_gate(on_action=lambda action, msg: _headless_action(ctx, supervisor, action,
                                                                       msg))
    # its view, for a tray app started beside it (which then only relays): api/view_file.py
    publisher = view_file.Publisher(ctx.paths.data_dir)
    supervisor.append(Supervisor(ctx, gate, publish=publisher))
    try:
        return supervisor[0].run(stop)
    finally:
        publisher.remove()
        lock.release()
        log.info("stopped watching")


def _headless_action(ctx: AppContext, sup: list[Any], action: str, msg: Any) -> None:
    """A notification button pressed while `pitcrew watch` runs (no dashboard to open:
    a click opens the terminal; Snooze was already applied to the gate by the notifier)."""
    from pitcrew.supervisor.adapters.terminal_app import open_terminal
    from pitcrew.supervisor.api.commands import ResumeNow

    terminal = getattr(msg, "terminal", None)
    if action == "resume" and terminal and sup:
        sup[0].command(ResumeNow(terminal))
    elif action in ("open", "clicked") and terminal:
        def focus() -> None:
            try:
                logging.getLogger("pitcrew").info(
                    "%s", open_terminal(ctx.tmux, terminal.rsplit(":", 1)[-1]))
            except PitcrewError as exc:
                logging.getLogger("pitcrew").warning("cannot open the terminal: %s", exc)

        threading.Thread(target=focus, daemon=True).start()


# -- autopilot on|off|pause|resume|status ------------------------------------------------------

def autopilot(args: argparse.Namespace) -> int:
    ctx = load_context(args.tmux_socket)
    what = args.action
    if what in ("on", "off"):
        config_edit.set_value(ctx.paths.config_file, "autopilot", "enabled", what == "on")
        # Off also clears any pause; turning Autopilot on grants the screen-read consent
        _state_command(ctx, ChangeState(paused=False, consent=True if what == "on" else None))
    elif what in ("pause", "resume"):
        _state_command(ctx, ChangeState(paused=what == "pause"))
    ctx = load_context(args.tmux_socket)
    if getattr(args, "json", False):
        print(json.dumps(_status_json(ctx), indent=2))
        return 0
    print(_status(ctx))
    for line in _pending(ctx):
        print(f"  {line}")
    return 0


def _mode(ctx: AppContext) -> tuple[Mode, bool]:
    off_for_launch = os.environ.get("PITCREW_AUTOPILOT", "").strip().lower() == "off"
    snap = state_store.load(ctx.paths.state_file).snapshot
    if off_for_launch or not ctx.config.autopilot:
        return Mode.OFF, off_for_launch
    return (Mode.PAUSED if snap.paused else Mode.ON), off_for_launch


def _status(ctx: AppContext) -> str:
    mode, off_for_launch = _mode(ctx)
    line = status_line(mode, off_for_launch)
    return f"Autopilot: {'On. ' if mode is Mode.ON else ''}{line}"


def _pending(ctx: AppContext) -> list[str]:
    """Per terminal, what Autopilot will do next or why it holds (from state.json)."""
    now = time.time()
    out = []
    for _key, state in sorted(state_store.load(ctx.paths.state_file).snapshot.terminals.items()):
        note = incident_note(state.incident, now)
        if note:
            prompt = state.incident.prompt if state.incident else ""
            out.append(f"{state.terminal} ({state.agent}): {note}"
                       + (f' — "{prompt[:60]}"' if prompt else ""))
    return out


def _status_json(ctx: AppContext) -> dict[str, Any]:
    mode, off_for_launch = _mode(ctx)
    now = time.time()
    pending = []
    for key, state in sorted(state_store.load(ctx.paths.state_file).snapshot.terminals.items()):
        inc = state.incident
        if inc is None or not incident_note(inc, now):
            continue
        pending.append({"terminal": key, "target": state.terminal, "agent": state.agent,
                        "prompt": inc.prompt, "phase": inc.phase.value, "hold": inc.hold,
                        "next_at": inc.next_at, "attempts": inc.attempts,
                        "note": incident_note(inc, now)})
    return {"mode": mode.value, "off_for_launch": off_for_launch,
            "status": status_line(mode, off_for_launch), "pending": pending}


def _state_command(ctx: AppContext, command: Command, queue_only: bool = False) -> None:
    """Hand a command to the running supervisor, or apply it to state.json when none runs.

    `queue_only` commands (a message to send, a seat binding) need a supervisor to resolve
    the terminal: they wait in the command spool for the next one to start.
    """
    record = {**command.to_record(), "at": time.time()}
    if queue_only:
        spool.append(ctx.paths.data_dir / "commands.jsonl", record)
        return
    lock = lock_for(ctx)
    if lock.acquire("pitcrew autopilot") is None:
        try:
            snap = state_store.load(ctx.paths.state_file).snapshot
            if isinstance(command, ChangeState):
                state_store.save(ctx.paths.state_file, apply_change(snap, command))
        finally:
            lock.release()
    else:
        spool.append(ctx.paths.data_dir / "commands.jsonl", record)


# -- ledger --------------------------------------------------------------------------------

def ledger(args: argparse.Namespace) -> int:
    rows = Ledger(resolve().ledger_file).tail(args.tail)
    if args.json:   # redacted again (older rows), and nothing a terminal would act on
        data = [recordable(r.to_json()) for r in rows]
        sys.stdout.write(printable_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")
        return 0
    if not rows:
        print("No Autopilot decisions yet.")
        return 0
    for r in rows:
        when = dt.datetime.fromtimestamp(r.at).strftime("%Y-%m-%d %H:%M:%S")
        prompt = redact(r.prompt) if len(r.prompt) <= 50 else redact(r.prompt)[:49] + "…"
        print(f"{when}  {r.badge.value:<18}  {printable(r.agent)} · {printable(r.project)}")
        said = r.attempt and f"attempt {r.attempt}" not in r.reason   # a Resumed row says it
        print(f"    \"{printable(prompt)}\" — {printable(redact(r.reason))}"
              + (f" (attempt {r.attempt})" if said else ""))
    return 0


# -- hook EVENT (called by the agent CLIs' hooks) -------------------------------------------

def hook(args: argparse.Namespace) -> int:
    """Record what a CLI hook reports. Never fails loudly: a hook must not block the agent."""
    try:
        raw = sys.stdin.read() if not sys.stdin.isatty() else ""
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            payload = {}
        server = Path(os.environ.get("TMUX", "").split(",")[0]).name or None
        record = {
            "at": time.time(), "event": args.event, "pane": os.environ.get("TMUX_PANE"),
            "server": server, "session_id": payload.get("session_id"),
            "prompt": payload.get("prompt"), "cwd": payload.get("cwd"),
            "reason": payload.get("reason") or payload.get("source"),
            "message": payload.get("message"),
        }
        spool.append(resolve().data_dir / "hook-events.jsonl", record)
    except Exception:  # a hook must never block or break the agent CLI
        pass
    return 0


def hooks(args: argparse.Namespace) -> int:
    if args.cli != "claude":
        raise PitcrewError(f"hooks for {args.cli!r} are not supported yet (only claude)")
    exe = _pitcrew_command()
    print(claude_hooks.install(exe) if args.action == "install" else claude_hooks.uninstall())
    return 0


def _pitcrew_command() -> str:
    import shutil

    found = shutil.which("pitcrew")
    if found:
        return found
    return f"{sys.executable} -m pitcrew.supervisor"
