"""`pitcrew` — the command line. Stable: tests and users rely on its words and JSON.

With no subcommand it starts the tray app when a display is there, and `pitcrew watch`
(headless) with a one-line explanation when not. Every error reaches the user as one line
(`pitcrew: …`); a traceback goes only to the log file.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from pitcrew.supervisor import __version__
from pitcrew.supervisor.adapters.display import has_display
from pitcrew.supervisor.cli import (
    autopilot_cmds,
    commands,
    host_cmds,
    report_cmd,
    secret_cmds,
    team_cmds,
)
from pitcrew.supervisor.cli.logs import setup_logging
from pitcrew.supervisor.core.errors import PitcrewError

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pitcrew",
        description="Keeps your AI coding agents working. Without a command: start the tray "
        "app (or `pitcrew watch` when there is no display).",
    )
    parser.add_argument("--version", action="version", version=f"pitcrew {__version__}")
    parser.add_argument(
        "--tmux-socket", metavar="NAME",
        help="tmux server to watch: a socket name (tmux -L) or path (tmux -S); "
        "default: $PITCREW_TMUX_SOCKET, then config.toml, then your default server",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("watch", help="run the supervisor headless (no display needed)")
    p.add_argument("--once", action="store_true", help="scan once, print, and exit")
    p.set_defaults(func=commands.watch)

    p = sub.add_parser("autopilot", help="turn Autopilot on or off, pause or resume it")
    p.add_argument("action", choices=["on", "off", "pause", "resume", "status"])
    p.add_argument("--json", action="store_true", help="status as JSON (with what is pending)")
    p.set_defaults(func=autopilot_cmds.autopilot)

    p = sub.add_parser("ledger", help="Autopilot's most recent decisions")
    p.add_argument("--tail", type=int, default=5, metavar="N", help="how many (default 5)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=autopilot_cmds.ledger)

    p = sub.add_parser("send", help="queue a message for an agent terminal")
    p.add_argument("terminal", metavar="TERMINAL", help="pane id (%%3), tmux target "
                   "(work:1.0) or terminal key (server:%%3)")
    p.add_argument("text", nargs="+", metavar="TEXT")
    p.add_argument("--wait", action="store_true", help="queue it even if that terminal is "
                   "not there yet (by pane id or terminal key)")
    p.set_defaults(func=team_cmds.send)

    p = sub.add_parser("rerun", help="start a terminal's agent in a fresh session and send "
                       "its task again")
    p.add_argument("terminal", metavar="TERMINAL", help="pane id (%%3), tmux target "
                   "(work:1.0) or terminal key (server:%%3)")
    p.set_defaults(func=team_cmds.rerun)

    p = sub.add_parser("consent", help="grant or revoke sending screen text to checkers")
    p.add_argument("action", choices=["grant", "revoke", "status"])
    p.set_defaults(func=team_cmds.consent)

    p = sub.add_parser("diagnosis", help="Diagnose & restore: on/off, ai/timer, checkers")
    p.add_argument("action", choices=["on", "off", "ai", "timer", "checkers", "status"])
    p.add_argument("checkers", nargs="*", metavar="PROVIDER[:MODEL]",
                   help="with `checkers`: up to 4, in order (none: first installed)")
    p.set_defaults(func=team_cmds.diagnosis)

    p = sub.add_parser("seat", help="list seats, or bind a terminal to a seat")
    p.add_argument("action", choices=["list", "bind"])
    p.add_argument("seat", nargs="?")
    p.add_argument("terminal", nargs="?")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=team_cmds.seat)

    p = sub.add_parser("launch", help="start a seat's agent in a new tmux window")
    p.add_argument("seat")
    p.add_argument("--session", help="tmux session to open it in (default: the seat's)")
    p.set_defaults(func=team_cmds.launch)

    p = sub.add_parser("hook", help="record an agent CLI hook event (called by the CLI)")
    p.add_argument("event")
    p.set_defaults(func=autopilot_cmds.hook)

    p = sub.add_parser("hooks", help="install or remove Pitcrew's hooks in an agent CLI")
    p.add_argument("action", choices=["install", "uninstall"])
    p.add_argument("cli", choices=["claude"])
    p.set_defaults(func=autopilot_cmds.hooks)

    p = sub.add_parser("status", help="list every agent terminal and its state")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--host", metavar="NAME", help="only this host (`local`, or a name from "
                   "`pitcrew hosts list`)")
    p.set_defaults(func=commands.status)

    p = sub.add_parser("classify", help="classify a screen's text (file or stdin)")
    p.add_argument("file", nargs="?", default="-", metavar="FILE|-")
    p.add_argument("--provider", metavar="NAME", help="use this provider's screen markers")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--now", metavar="ISO", help="the moment the screen was captured "
                   "(for relative reset times; default: now)")
    p.add_argument("--tz", metavar="ZONE", help="zone for clock times that name none "
                   "(default: this machine's)")
    p.add_argument("--cursor", metavar="X,Y", help="tmux's cursor when the screen was "
                   "captured (#{cursor_x},#{cursor_y}): tells typed text from a hint")
    p.add_argument("--explain", action="store_true",
                   help="show which rule fired on which line, and why the state won")
    p.set_defaults(func=commands.classify)

    p = sub.add_parser("providers", help="list the agent CLIs Pitcrew knows")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=commands.providers)

    p = sub.add_parser("doctor", help="check this machine's setup and say what to fix")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=commands.doctor)

    p = sub.add_parser("tray", help="start the tray app (needs a display)")
    p.set_defaults(func=commands.tray)

    report_cmd.register(sub)
    secret_cmds.register(sub)
    host_cmds.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        if has_display():
            args.func = commands.tray
        else:
            print(
                "pitcrew: no display (DISPLAY and WAYLAND_DISPLAY are unset); "
                "running headless as `pitcrew watch`.",
                file=sys.stderr,
            )
            args.func = commands.watch
            args.once = False
    setup_logging(verbose=args.verbose, stderr=args.func in (commands.watch,))
    try:
        return int(args.func(args) or 0)
    except PitcrewError as exc:
        print(f"pitcrew: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        log.exception("internal error in %s", args.command)
        print(f"pitcrew: internal error: {exc} (details in the log: "
              f"{commands.log_path()})", file=sys.stderr)
        return 70
