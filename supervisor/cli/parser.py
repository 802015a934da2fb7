"""The `pitcrew` command line's grammar: every subcommand, option and help text, and nothing
else.

Why a module of its own, importing nothing of Pitcrew: `pitcrew --version` and every
`--help` are answered from here alone, and a subcommand names its handler as a string
(`"commands:status"`) that `main` imports only when that subcommand runs. Importing the
handlers up front cost a third of a second per run (the whole service layer came along).
tests/cli/test_cold_start.py guards the import graph.

The global options (`--tmux-socket`, `-v`, `--version`) are accepted before or after the
subcommand: each subparser carries them too, with a suppressed default, so a value given
before the subcommand is kept unless the same option is given again after it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

TERMINAL_HELP = "pane id (%%3), tmux target (work:1.0) or terminal key (server:%%3)"


class _Version(argparse.Action):
    """`--version`, reading the package metadata only when asked (it costs ~40 ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from pitcrew.supervisor import __version__

        sys.stdout.write(f"pitcrew {__version__}\n")
        parser.exit()


def _add_globals(p: argparse.ArgumentParser, top: bool) -> None:
    """The options every subcommand takes too; after the subcommand they override (SUPPRESS
    keeps the top-level value when an option is not repeated)."""
    keep: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    p.add_argument("--version", action=_Version, help="print Pitcrew's version and exit")
    p.add_argument(
        "--tmux-socket", metavar="NAME", **keep,
        help="tmux server to watch: a socket name (tmux -L) or path (tmux -S); "
        "default: $PITCREW_TMUX_SOCKET, then config.toml, then your default server",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log debug details", **keep)


class _Sub:
    """Adds subcommands with the global options, a description and a lazy handler."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self._sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(self, name: str, handler: str, summary: str, detail: str = "",
            globals_: bool = True) -> argparse.ArgumentParser:
        """`summary` is the line in `pitcrew --help`; the page of `pitcrew NAME --help` opens
        with it, then `detail`."""
        description = f"{summary[0].upper()}{summary[1:]}. {detail}".rstrip()
        p = self._sub.add_parser(name, help=summary, description=description)
        if globals_:
            _add_globals(p, top=False)
        p.set_defaults(handler=handler)
        return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pitcrew",
        description="Keeps your AI coding agents working. Without a command: start the tray "
        "app (or `pitcrew watch` when there is no display). Options such as --tmux-socket "
        "may be given before or after the command.",
    )
    _add_globals(parser, top=True)
    sub = _Sub(parser)
    _supervising(sub)
    _messaging(sub)
    _diagnosis_and_seats(sub)
    _reading(sub)
    _machine(sub)
    return parser


def _supervising(sub: _Sub) -> None:
    p = sub.add("watch", "commands:watch", "run the supervisor headless (no display needed)",
                "Watches every agent terminal on the tmux server and logs what it sees and "
                "does to the terminal; Ctrl-C stops it.")
    p.add_argument("--once", action="store_true", help="scan once, print, and exit")

    sub.add("tray", "commands:tray", "start the tray app (needs a display)")

    p = sub.add("autopilot", "autopilot_cmds:autopilot",
                "turn Autopilot on or off, pause or resume it",
                "Autopilot resumes crashed and limited agents by itself; `status` also lists "
                "what it will do next for each terminal.")
    p.add_argument("action", choices=["on", "off", "pause", "resume", "status"],
                   help="on/off: a setting in config.toml; pause/resume: until you resume; "
                   "status: show the mode and what is pending")
    p.add_argument("--json", action="store_true", help="status as JSON (with what is pending)")

    p = sub.add("ledger", "autopilot_cmds:ledger", "Autopilot's most recent decisions",
                "From the ledger (autopilot-ledger.jsonl in the data folder), newest first.")
    p.add_argument("--tail", type=int, default=5, metavar="N", help="how many (default 5)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add("hook", "autopilot_cmds:hook",
                "record an agent CLI hook event (called by the CLI)",
                "Run by the hooks `pitcrew hooks install` adds; reads the event's JSON on "
                "stdin and never fails loudly.")
    p.add_argument("event", metavar="EVENT", help="the hook's event name, e.g. Stop or "
                   "UserPromptSubmit")

    p = sub.add("hooks", "autopilot_cmds:hooks",
                "install or remove Pitcrew's hooks in an agent CLI",
                "The hooks tell Pitcrew at once when a prompt is sent or the agent stops; "
                "your own hooks are kept.")
    p.add_argument("action", choices=["install", "uninstall"], help="add or remove them")
    p.add_argument("cli", choices=["claude"], help="the agent CLI (claude: Claude Code)")


def _messaging(sub: _Sub) -> None:
    p = sub.add("send", "team_cmds:send", "queue a message for an agent terminal",
                "The running Pitcrew types it when the agent is ready for input.")
    p.add_argument("terminal", metavar="TERMINAL", help=f"the agent terminal: {TERMINAL_HELP}")
    p.add_argument("text", nargs="+", metavar="TEXT", help="the message (words are joined "
                   "with spaces)")
    p.add_argument("--wait", action="store_true", help="queue it even if that terminal is "
                   "not there yet (by pane id or terminal key)")

    p = sub.add("restore", "restore_cmd:restore",
                "put the agents from before a restart back where they were",
                "After the tmux server (or the machine) restarted: recreates the missing "
                "sessions, windows and panes (names, folders, layout) that Pitcrew recorded "
                "while watching, starts each agent the way it was started in its own session, "
                "and has the running Pitcrew ask only the agents that were mid-task to "
                "continue. Windows that exist are left alone, so running it twice changes "
                "nothing.")
    p.add_argument("session", nargs="*", metavar="SESSION",
                   help="only these tmux sessions (default: all)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan (sessions, windows, agents, what is typed) and do "
                   "nothing")

    p = sub.add("rerun", "team_cmds:rerun",
                "start a terminal's agent in a fresh session and send its task again",
                "Needs a running Pitcrew; the ledger's Rerun row names both sessions.")
    p.add_argument("terminal", metavar="TERMINAL", help=f"the agent terminal: {TERMINAL_HELP}")


def _diagnosis_and_seats(sub: _Sub) -> None:
    p = sub.add("consent", "team_cmds:consent",
                "grant or revoke sending screen text to checkers",
                "A checker is an agent CLI Pitcrew asks why a terminal is stuck; it sees the "
                "screen's text with secrets removed.")
    p.add_argument("action", choices=["grant", "revoke", "status"],
                   help="grant or revoke consent, or show it")

    p = sub.add("diagnosis", "team_cmds:diagnosis",
                "Diagnose & restore: on/off, ai/timer, checkers",
                "Without arguments after the action, `checkers` goes back to the first "
                "installed checker.")
    p.add_argument("action", choices=["on", "off", "ai", "timer", "checkers", "status"],
                   help="on/off: diagnose stuck agents or not; ai/timer: ask checkers or "
                   "only wait; checkers: choose them; status: show the settings")
    p.add_argument("checkers", nargs="*", metavar="PROVIDER[:MODEL]",
                   help="with `checkers`: up to 4, in order (none: first installed)")

    p = sub.add("seat", "team_cmds:seat", "list seats, or bind a terminal to a seat",
                "A seat ([[seats]] in config.toml) is a job with a primary agent and backups "
                "to fail over to.")
    p.add_argument("action", choices=["list", "bind"], help="list the seats, or bind SEAT "
                   "to TERMINAL")
    p.add_argument("seat", nargs="?", metavar="SEAT", help="with bind: the seat's name")
    p.add_argument("terminal", nargs="?", metavar="TERMINAL",
                   help=f"with bind: the agent terminal: {TERMINAL_HELP}")
    p.add_argument("--json", action="store_true", help="with list: print JSON")

    p = sub.add("launch", "team_cmds:launch", "start a seat's agent in a new tmux window",
                "Starts the agent that holds the seat now (its primary, or the backup it "
                "failed over to), on the seat's host when it names one.")
    p.add_argument("seat", metavar="SEAT", help="the seat's name ([[seats]] in config.toml)")
    p.add_argument("--session", help="tmux session to open it in (default: the seat's)")


def _reading(sub: _Sub) -> None:
    p = sub.add("status", "commands:status", "list every agent terminal and its state",
                "One scan of the tmux server (and of each remote host), then exit.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--host", metavar="NAME", help="only this host (`local`, or a name from "
                   "`pitcrew hosts list`)")

    p = sub.add("tmux-status", "tmux_status:tmux_status", "a short segment for tmux's "
                "status-right: agents that need you, agents working",
                "Prints e.g. `⚑2 ⟳3` (two agents need you, three are working) from the view "
                "the running watcher publishes; nothing when no watcher runs. In ~/.tmux.conf: "
                "set -g status-right '#(pitcrew tmux-status) %H:%M' (and status-interval 5).")

    p = sub.add("classify", "commands:classify", "classify a screen's text (file or stdin)",
                "Prints the state Pitcrew would read from that screen (busy, idle, "
                "rate_limit, crashed …) and the evidence.")
    p.add_argument("file", nargs="?", default="-", metavar="FILE|-",
                   help="a file holding the screen's text; - or nothing: stdin")
    p.add_argument("--provider", metavar="NAME", help="use this provider's screen markers")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--now", metavar="ISO", help="the moment the screen was captured "
                   "(for relative reset times; default: now)")
    p.add_argument("--tz", metavar="ZONE", help="zone for clock times that name none "
                   "(default: this machine's)")
    p.add_argument("--cursor", metavar="X,Y", help="tmux's cursor when the screen was "
                   "captured (#{cursor_x},#{cursor_y}): tells typed text from a hint")
    p.add_argument("--explain", action="store_true",
                   help="show the rules that matched, in screen order: which won, "
                   "which lost and why")

    p = sub.add("providers", "commands:providers", "list the agent CLIs Pitcrew knows",
                "One TOML file per CLI; files in the config folder's providers/ add "
                "providers or override the shipped ones.")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add(
        "report", "report_cmd:report",
        "incident report: timelines, incidents, checker answers, anomalies",
        "From the ledger (all rotated files), state.json and the agents' session files: per "
        "terminal a state timeline, each incident with every decision and reading behind "
        "it, the checkers' answers with timings, anomalies with a severity, restarts per "
        "hour and token usage. Default: the last 24 hours.")
    p.add_argument("terminal", nargs="?", metavar="TERMINAL",
                   help="only this terminal: its name (work:%%3), pane id (%%3) or key")
    p.add_argument("--incident", type=int, metavar="N", help="only incident N (all history)")
    p.add_argument("--since", metavar="SPAN", help="how far back: 24h (default), 90m, 7d, 1w")
    p.add_argument("--html", metavar="FILE", help="write one self-contained HTML file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _machine(sub: _Sub) -> None:
    p = sub.add("doctor", "commands:doctor", "check this machine's setup and say what to fix",
                "Exits 1 when a check fails.")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add("secret", "secret_cmds:secret",
                "keep a secret (an API key, a webhook) in the OS keyring",
                "Values are never taken from the command line: `set` reads stdin.")
    p.add_argument("action", choices=["set", "delete", "status"],
                   help="store, remove, or say whether it is set (and which keyring)")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="with set/delete: the secret's name; `set` reads its value from "
                   "stdin, or asks for it when stdin is a terminal")

    # `hosts add … --tmux-socket NAME` names the remote tmux server, so after `hosts` that
    # option is the host's, not the global one (no hosts action uses the local server).
    p = sub.add("hosts", "host_cmds:hosts",
                "list, add, remove or check remote hosts (tmux over ssh)",
                "Pitcrew watches the agents in a remote host's tmux over one ssh "
                "connection. After `hosts`, --tmux-socket names the remote tmux server.",
                globals_=False)
    p.add_argument("--version", action=_Version, help="print Pitcrew's version and exit")
    p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                   help="log debug details")
    p.add_argument("action", choices=["list", "add", "remove", "check"],
                   help="list the hosts, add or remove one, or try connecting to them")
    p.add_argument("name", nargs="?", metavar="NAME", help="the host's name (e.g. gpu1)")
    p.add_argument("ssh", nargs="?", metavar="SSH",
                   help='with add: what you would type after `ssh` ("me@gpu1", an alias)')
    p.add_argument("--tmux-socket", dest="host_socket", metavar="NAME",
                   help="with add: the remote tmux server (tmux -L NAME / -S PATH)")
    p.add_argument("--disabled", action="store_true", help="with add: add it switched off")
    p.add_argument("--json", action="store_true", help="with list/check: print JSON")
