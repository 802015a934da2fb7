"""`pitcrew` — the command line. Stable: tests and users rely on its words and JSON.

With no subcommand it starts the tray app when a display is there, and `pitcrew watch`
(headless) with a one-line explanation when not. Every error reaches the user as one line
(`pitcrew: …`); a traceback goes only to the log file.

Only the subcommand that runs is imported (its handler is named in cli/parser.py as
"module:function"): `pitcrew --version` loads no service, Qt or scheduler code.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

from pitcrew.supervisor.cli.parser import build_parser
from pitcrew.supervisor.core.errors import PitcrewError


def handler(spec: str) -> Callable[..., int | None]:
    """The function a subcommand runs, imported now: "commands:status" names
    `pitcrew.supervisor.cli.commands.status`."""
    module, _, name = spec.partition(":")
    func: Callable[..., int | None] = getattr(
        importlib.import_module(f"pitcrew.supervisor.cli.{module}"), name)
    return func


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        from pitcrew.supervisor.adapters.display import has_display

        if has_display():
            args.handler = "commands:tray"
        else:
            print(
                "pitcrew: no display (DISPLAY and WAYLAND_DISPLAY are unset); "
                "running headless as `pitcrew watch`.",
                file=sys.stderr,
            )
            args.handler = "commands:watch"
            args.once = False
    from pitcrew.supervisor.cli.logs import setup_logging

    setup_logging(verbose=args.verbose, stderr=args.handler == "commands:watch")
    try:
        return int(handler(args.handler)(args) or 0)
    except PitcrewError as exc:
        print(f"pitcrew: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        import logging

        from pitcrew.supervisor.store.paths import resolve

        logging.getLogger(__name__).exception("internal error in %s", args.command)
        print(f"pitcrew: internal error: {exc} (details in the log: "
              f"{resolve().log_file})", file=sys.stderr)
        return 70
