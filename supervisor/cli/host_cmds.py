"""`pitcrew hosts list|add|remove|check`: the remote machines whose tmux Pitcrew watches."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from pitcrew.supervisor.adapters.clock import local_zone, now_utc
from pitcrew.supervisor.adapters.ssh import RemoteTmux, SshLink
from pitcrew.supervisor.core.errors import PitcrewError, TmuxError
from pitcrew.supervisor.core.hosts import LOCAL, Host, HostState, parse_host
from pitcrew.supervisor.core.seats import Seat
from pitcrew.supervisor.providers.model import Provider
from pitcrew.supervisor.service.remote_scan import HostScan, scan_remote
from pitcrew.supervisor.service.scan import Terminal
from pitcrew.supervisor.store.config_edit import UneditableConfig
from pitcrew.supervisor.store.hosts_edit import add_host, hosts_in, remove_host
from pitcrew.supervisor.store.paths import resolve


def hosts(args: argparse.Namespace) -> int:
    path = resolve().config_file
    try:
        known = hosts_in(path)
    except (UneditableConfig, ValueError) as exc:
        raise PitcrewError(str(exc)) from None
    if args.action == "list":
        return _list(known, args.json)
    if args.action == "add":
        if not args.name or not args.ssh:
            raise PitcrewError("usage: pitcrew hosts add NAME SSH [--tmux-socket NAME]")
        try:
            host = parse_host({"name": args.name, "ssh": args.ssh,
                               "tmux_socket": args.host_socket or "",
                               "enabled": not args.disabled})
            add_host(path, host)
        except (ValueError, UneditableConfig) as exc:
            raise PitcrewError(f"cannot add host {args.name}: {exc}") from None
        print(f"Added host {host.name} ({host.ssh}); `pitcrew hosts check {host.name}` tries "
              "the connection, the running Pitcrew picks it up when restarted.")
        return 0
    if args.action == "remove":
        if not args.name:
            raise PitcrewError("usage: pitcrew hosts remove NAME")
        try:
            removed = remove_host(path, args.name)
        except UneditableConfig as exc:
            raise PitcrewError(str(exc)) from None
        if not removed:
            raise PitcrewError(f"no host named {args.name!r} in {path.name}")
        print(f"Removed host {args.name}.")
        return 0
    chosen = [h for h in known if args.name in (None, h.name)]
    if args.name and not chosen:
        raise PitcrewError(f"no host named {args.name!r} in {path.name} "
                           "(see `pitcrew hosts list`)")
    results = [check(h) for h in chosen]
    if args.json:
        print(json.dumps(results, indent=2))
    elif not results:
        print("No remote hosts: add one with `pitcrew hosts add NAME SSH`.")
    for r in results if not args.json else ():
        print(r["line"])
    return 0 if all(r["state"] == HostState.UP for r in results) else 1


def _list(known: tuple[Host, ...], as_json: bool) -> int:
    rows = [{"name": LOCAL, "ssh": None, "tmux_socket": None, "enabled": True},
            *({"name": h.name, "ssh": h.ssh, "tmux_socket": h.tmux_socket,
               "enabled": h.enabled} for h in known)]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    table = [["NAME", "SSH", "TMUX", "ENABLED"]] + [
        [str(r["name"]), str(r["ssh"] or "(this machine)"), str(r["tmux_socket"] or "default"),
         "yes" if r["enabled"] else "no"] for r in rows]
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return 0


def remote_key(hosts: tuple[Host, ...], ref: str) -> str | None:
    """`gpu1:%3` when `ref` is that key of an enabled remote host; None for anything else."""
    head, _, pane = ref.partition(":")
    if pane.startswith("%") and pane[1:].isdigit() and any(
            h.name == head and h.enabled for h in hosts):
        return ref
    return None


def launch_remote(hosts: tuple[Host, ...], seat: Seat, session: str, argv: Sequence[str],
                  provider: str) -> str:
    """Open a seat's agent on its host (`pitcrew launch`); its terminal key (`gpu1:%5`)."""
    host = next((h for h in hosts if h.name == seat.host), None)
    if host is None:
        raise PitcrewError(f"seat {seat.name}: no host named {seat.host!r}")
    with tempfile.TemporaryDirectory(prefix="pitcrew-launch-") as tmp:
        link = SshLink(host, Path(tmp))
        try:
            if not link.connect():
                raise PitcrewError(f"seat {seat.name}: host {host.name} is down: "
                                   f"{link.problem}")
            tmux = RemoteTmux(link)
            try:
                if not tmux.has_session(session):
                    tmux.run("new-session", "-d", "-s", session, "sleep 1")   # closes itself
                pane = tmux.new_window(session, argv, seat.cwd, name=f"{seat.name}-{provider}")
                tmux.set_remain_on_exit(pane)
            except TmuxError as exc:
                raise PitcrewError(f"seat {seat.name}: cannot start it on {host.name}: "
                                   f"{exc}") from None
        finally:
            link.stop()
    return pane


def check(host: Host) -> dict[str, object]:
    """Connect once and say, in one line, whether tmux answers there and what it runs."""
    with tempfile.TemporaryDirectory(prefix="pitcrew-check-") as tmp:
        link = SshLink(host, Path(tmp))
        try:
            if not link.connect():
                return {"name": host.name, "state": HostState.DOWN, "error": link.problem,
                        "line": f"{host.name}: down · {link.problem}"}
            tmux = RemoteTmux(link)
            try:
                version = tmux.version()
                sessions = tmux.run("list-sessions", "-F", "#{session_name}")
                panes = tmux.list_panes() if sessions.ok else []
            except TmuxError as exc:
                return {"name": host.name, "state": HostState.DOWN, "error": str(exc),
                        "line": f"{host.name}: down · {exc}"}
        finally:
            link.stop()
    names = sessions.stdout.split() if sessions.ok else []
    if not version:
        line = f"{host.name}: up · tmux is not installed there (or not on its PATH)"
    elif not sessions.ok:
        line = (f"{host.name}: up · {version} · no tmux server running "
                f"({host.tmux_socket or 'default'})")
    else:
        line = (f"{host.name}: up · {version} · {len(names)} session(s), {len(panes)} "
                f"pane(s)")
    return {"name": host.name, "state": HostState.UP, "tmux": version, "sessions": names,
            "panes": len(panes), "line": line}


def remote_scans(hosts: tuple[Host, ...], providers: list[Provider], only: str | None
                 ) -> list[HostScan]:
    """Scan the enabled remote hosts (or just `only`), one connection each, in turn."""
    if only is not None and only != LOCAL and not any(h.name == only for h in hosts):
        raise PitcrewError(f"no host named {only!r} (see `pitcrew hosts list`)")
    out = []
    for host in hosts:
        if not host.enabled or only not in (None, host.name):
            continue
        with tempfile.TemporaryDirectory(prefix="pitcrew-status-") as tmp:
            link = SshLink(host, Path(tmp))
            try:
                if not link.connect():
                    out.append(HostScan(host.name, HostState.DOWN, error=link.problem))
                    continue
                out.append(scan_remote(RemoteTmux(link), providers, now_utc(), local_zone()))
            finally:
                link.stop()
    return out


def print_status(local: list[Terminal] | None, server: str, running: bool,
                 remotes: list[HostScan], as_json: bool,
                 row: Callable[[Terminal], list[str]],
                 to_json: Callable[[Terminal], dict[str, object]] | None = None) -> None:
    """`pitcrew status` with hosts: a HOST column, and one line per host that is down."""
    terminals = [*(local or []), *(t for r in remotes for t in r.terminals)]
    if as_json:
        data: dict[str, object] = {}
        if local is not None:
            data.update(server=server, server_running=running)
        data.update(terminals=[(to_json or Terminal.to_json)(t) for t in terminals],
                    hosts=[r.to_json() for r in remotes])
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return
    if terminals:
        head = ["PANE", "TARGET", "AGENT", "PID", "STATE", "SESSION", "CWD"]
        if terminals and len(row(terminals[0])) > len(head):
            head.insert(5, "ATTENTION")
        table = [["HOST", *head],
                 *([t.host, *row(t)] for t in terminals)]
        widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
        for line in table:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    else:
        print("No agent terminals.")
    if local is not None and not running:
        print(f"{LOCAL}: no tmux server is running ({server})")
    for r in remotes:
        if r.state == HostState.DOWN:
            print(f"{r.host}: down · {r.error}")
        elif not r.server_running:
            print(f"{r.host}: no tmux server is running")
