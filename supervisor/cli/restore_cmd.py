"""`pitcrew restore`: put the agents from before a restart of the tmux server (or of the
machine) back where they were, each in its own session (service/restoring.py does it; the
watcher keeps the record it works from, fleet.json)."""

from __future__ import annotations

import argparse
import time
import uuid

from pitcrew.supervisor.adapters import processes
from pitcrew.supervisor.adapters.tmux_places import Places
from pitcrew.supervisor.api.commands import Send
from pitcrew.supervisor.cli.autopilot_cmds import _state_command
from pitcrew.supervisor.core.errors import PitcrewError
from pitcrew.supervisor.core.fleet import from_before
from pitcrew.supervisor.core.report_rows import printable
from pitcrew.supervisor.service.app_context import AppContext, load_context
from pitcrew.supervisor.service.restoring import Restorer, describe, plan_for
from pitcrew.supervisor.store import fleet_file
from pitcrew.supervisor.store.ledger import Ledger


def restore(args: argparse.Namespace) -> int:
    ctx = load_context(args.tmux_socket)
    loaded = fleet_file.load(ctx.paths.fleet_file)
    if loaded.problem:
        raise PitcrewError(loaded.problem)
    places = Places(ctx.tmux)
    windows = from_before(loaded.record.get(ctx.tmux.label, ()), places.ident())
    unknown = sorted(set(args.session) - {w.session for w in windows})
    if unknown:
        raise PitcrewError(f"no agents from before the restart in session(s) "
                           f"{', '.join(map(repr, unknown))}; nothing done")
    todo = plan_for(windows, places, ctx.registry, args.session)
    if todo.empty:
        print("Nothing to restore: every agent window from before the restart is there "
              "already." if todo.left_alone else
              "Nothing to restore: Pitcrew has no record of agents from before a restart "
              f"of tmux server {ctx.tmux.label}.")
        for line in describe(todo):
            print(printable(line))
        return 0
    print(("Would restore" if args.dry_run else "Restoring") + f" on tmux server "
          f"{ctx.tmux.label}:")
    for line in describe(todo):
        print(f"  {printable(line)}")
    if args.dry_run:
        print("Dry run: nothing was created, started or typed.")
        return 0
    done = Restorer(places, lambda pid: processes.shell_at_prompt(pid),
                    lambda key, text: _queue(ctx, key, text), Ledger(ctx.paths.ledger_file),
                    time.time, time.monotonic, time.sleep).carry_out(todo)
    for r in done:
        how = ("in its own session" if r.step.resumed else "started fresh") if r.started \
            else f"NOT started: {r.detail}"
        print(printable(f"{r.step.target} ({r.terminal}): {r.step.agent.agent} {how}"))
    if any(r.step.cont and r.started for r in done):
        print("The running Pitcrew types the continue message once each mid-task agent is "
              "ready (`pitcrew watch`, or the tray app).")
    return 0 if all(r.started for r in done) else 1


def _queue(ctx: AppContext, key: str, text: str) -> None:
    """The continue, as a delivery for the new terminal (what `pitcrew send --wait` queues):
    the watcher types it once the agent is ready, once."""
    _state_command(ctx, Send(key, text, uuid.uuid4().hex[:12], wait=True), queue_only=True)
