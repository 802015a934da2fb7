"""`pitcrew send`, `consent`, `diagnosis`, `seat` and `launch` from the command line."""

from __future__ import annotations

import argparse
import json
import os
import uuid

from pitcrew.supervisor.adapters import checker_cli as checkers
from pitcrew.supervisor.api.commands import Bind, ChangeState, Rerun, Send
from pitcrew.supervisor.cli import host_cmds
from pitcrew.supervisor.cli.autopilot_cmds import _state_command, lock_for
from pitcrew.supervisor.cli.host_cmds import remote_key
from pitcrew.supervisor.core.delivery import MAX_TEXT
from pitcrew.supervisor.core.errors import PitcrewError
from pitcrew.supervisor.core.plain_text import one_line, refusal
from pitcrew.supervisor.core.seats import parse_choice
from pitcrew.supervisor.service.app_context import AppContext, load_context
from pitcrew.supervisor.service.scan import (
    NoSuchTerminal,
    find_terminal,
    key_for_later,
    terminal_key,
)
from pitcrew.supervisor.store import config_edit, state_store
from pitcrew.supervisor.store.config import check_setting


def send(args: argparse.Namespace) -> int:
    """Resolve TERMINAL now, against the live server, and spool the terminal's key: the
    watcher matches keys, so a tmux target it could not match never reaches it. A terminal
    that is not there is an error unless `--wait` asks to queue for it."""
    ctx = load_context(args.tmux_socket)
    text = one_line(" ".join(args.text))
    if not text:
        raise PitcrewError("nothing to send")
    typed = len(" ".join(text.split()))   # as it will be typed: one line, spaces collapsed
    if typed > MAX_TEXT:   # refused here, whole: the watcher would type only its start
        raise PitcrewError(f"the message is {typed:,} characters long; at most {MAX_TEXT:,} "
                           "can be sent (nothing queued)")
    try:
        text.encode("utf-8")      # bytes that are no text arrive as lone surrogates
    except UnicodeEncodeError:
        raise PitcrewError("TEXT is not valid UTF-8 text; nothing sent") from None
    if (why := refusal(text)) is not None:     # typed, it would be a key (SPEC §7)
        raise PitcrewError(f"{why}; nothing queued")
    try:
        key = resolve_ref(ctx, args.terminal)
        shown = args.terminal
    except NoSuchTerminal as exc:
        later = key_for_later(args.terminal, ctx.tmux.label)
        if not args.wait:
            raise PitcrewError(f"{exc}; nothing queued (--wait queues it for a terminal "
                               "that is not there yet)") from None
        if later is None:
            raise PitcrewError(f"{exc}; --wait needs a pane id (%3) or terminal key "
                               f"({ctx.tmux.label}:%3), which a new pane can be matched "
                               "to") from None
        key, shown = later, f"{args.terminal} (not there yet)"
    # "wait": the watcher keeps it until it sees the terminal (it may not have found a pane
    # this command just found, and --wait asked to wait for one)
    send = Send(key, text, uuid.uuid4().hex[:12], wait=True)
    _state_command(ctx, send, queue_only=True)
    print(f"Queued for {shown} ({key}): Pitcrew types it when the agent is ready "
          f"(delivery {send.id}).")
    return 0


def rerun(args: argparse.Namespace) -> int:
    """Ask the running watcher for a fresh session of TERMINAL's agent. Only a running
    watcher can: a rerun kept in the spool for a later start would surprise whoever starts
    it, so with none running this says so and queues nothing."""
    ctx = load_context(args.tmux_socket)
    try:
        key = resolve_ref(ctx, args.terminal)
    except NoSuchTerminal as exc:
        # an agent that has exited is no agent terminal now, but the watcher knows its pane
        known = state_store.load(ctx.paths.state_file).snapshot.terminals
        later = key_for_later(args.terminal, ctx.tmux.label)
        key = later if later is not None and later in known else next(
            (k for k, t in known.items() if t.terminal == args.terminal), "")
        if not key:
            raise PitcrewError(f"{exc}; nothing rerun") from None
    lock = lock_for(ctx)
    if lock.acquire("pitcrew rerun") is None:
        lock.release()
        raise PitcrewError("no Pitcrew watcher is running (start `pitcrew` or `pitcrew "
                           "watch`); nothing rerun")
    _state_command(ctx, Rerun(key), queue_only=True)
    print(f"Rerun asked for {args.terminal} ({key}): the same agent starts in a fresh session "
          "(in that pane if the agent has exited, else in a new window) and gets its task's "
          "prompt again, if Pitcrew knows one; one rerun at a time. `pitcrew ledger` shows "
          "what was done: the Rerun row (both session ids, and whether the prompt was sent), "
          "or why nothing was.")
    return 0


def resolve_ref(ctx: AppContext, ref: str) -> str:
    """The terminal key of the agent terminal `ref` names; raises NoSuchTerminal. A remote
    host's terminal key (`gpu1:%3`) is taken as it is: the running Pitcrew knows its panes."""
    if (remote := remote_key(ctx.config.hosts, ref)) is not None:
        return remote
    found = find_terminal(ctx.tmux, ctx.active_providers, ref)
    return terminal_key(found.server, found.pane_id)


def consent(args: argparse.Namespace) -> int:
    ctx = load_context(args.tmux_socket)
    if args.action in ("grant", "revoke"):
        _state_command(ctx, ChangeState(consent=args.action == "grant"))
    snap = state_store.load(ctx.paths.state_file).snapshot
    if snap.consent:
        print("Screen-read consent: granted. A stuck terminal's screen text (secrets removed) "
              "may be sent to your checker CLIs; `pitcrew consent revoke` withdraws it.")
    else:
        print("Screen-read consent: not given. Only the local classifier reads screens; "
              "`pitcrew consent grant` (or `pitcrew autopilot on`) allows checker CLIs.")
    return 0


def diagnosis(args: argparse.Namespace) -> int:
    ctx = load_context(args.tmux_socket)
    path = ctx.paths.config_file
    if args.action in ("on", "off"):
        config_edit.set_value(path, "diagnosis", "enabled", args.action == "on")
    elif args.action in ("ai", "timer"):
        config_edit.set_value(path, "diagnosis", "mode", args.action)
    elif args.action == "checkers":
        labels = [parse_choice(c).label() for c in args.checkers]
        try:
            check_setting("diagnosis", "checkers", labels)   # config.toml's own rules
        except ValueError as exc:
            raise PitcrewError(str(exc)) from None
        config_edit.set_value(path, "diagnosis", "checkers", labels)
    ctx = load_context(args.tmux_socket)
    cfg = ctx.config
    mode = ("With AI (recommended)" if cfg.diagnosis_mode == "ai"
            else "Manual timer — no AI")
    print(f"Diagnose & restore stuck agents: {'on' if cfg.diagnosis else 'off'}")
    print(f"How to restore: {mode}")
    installed = [n for n in checkers.CANDIDATES if checkers.installed(ctx.registry, n)]
    if cfg.checkers:
        print("Checkers, in order: " + ", ".join(
            c.label() + ("" if c.provider in installed else " (not installed)")
            for c in cfg.checkers))
    else:
        first = installed[0] if installed else "none installed"
        print(f"Checkers: none chosen, so the first installed of "
              f"{', '.join(checkers.CANDIDATES)} ({first})")
    consent = state_store.load(ctx.paths.state_file).snapshot.consent
    print("Screen-read consent: " + ("granted" if consent else
                                     "not given (only the local classifier reads screens)"))
    return 0


def seat(args: argparse.Namespace) -> int:
    ctx = load_context(args.tmux_socket)
    seats = {s.name: s for s in ctx.config.seats}
    if args.action == "list":
        snap = state_store.load(ctx.paths.state_file).snapshot
        book = snap.extra.get("seats", {}) if isinstance(snap.extra, dict) else {}
        holders = book.get("holders", {})
        bound = book.get("terminals", {})
        if args.json:
            print(json.dumps([{"name": s.name, "cwd": s.cwd, "primary": s.primary.label(),
                               "backups": [b.label() for b in s.backups],
                               "holder": holders.get(s.name, s.primary.label()),
                               "terminals": sorted(k for k, v in bound.items() if v == s.name)}
                              for s in seats.values()], indent=2))
            return 0
        if not seats:
            print("No seats yet: add [[seats]] to config.toml (see README).")
        for s in seats.values():
            terms = ", ".join(sorted(k for k, v in bound.items() if v == s.name)) or "-"
            print(f"{s.name}: {holders.get(s.name, s.primary.label())} in {s.cwd} "
                  f"(backups: {', '.join(b.label() for b in s.backups) or '-'}; "
                  f"terminals: {terms})")
        return 0
    if not args.seat or not args.terminal:
        raise PitcrewError("usage: pitcrew seat bind SEAT TERMINAL")
    if args.seat not in seats:
        raise PitcrewError(f"no seat named {args.seat!r} in config.toml")
    try:
        key = resolve_ref(ctx, args.terminal)
    except NoSuchTerminal as exc:
        raise PitcrewError(str(exc)) from None
    _state_command(ctx, Bind(args.seat, key), queue_only=True)
    print(f"{args.terminal} ({key}) sits in seat {args.seat} (the running Pitcrew applies it "
          f"at once, or the next one to start).")
    return 0


def launch(args: argparse.Namespace) -> int:
    from pitcrew.supervisor.service.seats import launch_argv

    ctx = load_context(args.tmux_socket)
    seat = next((s for s in ctx.config.seats if s.name == args.seat), None)
    if seat is None:
        raise PitcrewError(f"no seat named {args.seat!r} in config.toml")
    snap = state_store.load(ctx.paths.state_file).snapshot
    holders = (snap.extra.get("seats") or {}).get("holders", {})
    label = holders.get(seat.name, seat.primary.label())
    choice = next((a for a in seat.agents if a.label() == label), seat.primary)
    provider = ctx.registry.get(choice.provider)
    if provider is None:
        raise PitcrewError(f"seat {seat.name}: no provider named {choice.provider!r}")
    session = args.session or seat.session or seat.name
    argv = launch_argv(provider, choice)
    if seat.host:
        pane = host_cmds.launch_remote(ctx.config.hosts, seat, session, argv, choice.provider)
        _state_command(ctx, Bind(seat.name, pane), queue_only=True)
        print(f"Launched {provider.display_name} for seat {seat.name} on {seat.host} in "
              f"{session} ({pane}).")
        return 0
    cwd = os.path.expanduser(seat.cwd)
    if not os.path.isdir(cwd):
        raise PitcrewError(f"seat {seat.name}: {cwd} is not a directory")
    tmux = ctx.tmux
    if tmux.has_session(session):
        pane = tmux.new_window(session, argv, cwd, name=f"{seat.name}-{choice.provider}")
    else:
        pane = tmux.new_session(session, argv, cwd)
    tmux.set_remain_on_exit(pane)
    key = f"{tmux.label}:{pane}"
    _state_command(ctx, Bind(seat.name, key), queue_only=True)
    print(f"Launched {provider.display_name} for seat {seat.name} in {session} ({pane}).")
    return 0
