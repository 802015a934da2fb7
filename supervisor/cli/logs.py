"""Logging is configured here and only here (entry points call `setup_logging`).

Logs are for people: a rotating file in the log dir always, plus stderr for `pitcrew watch`.
State is never read back from logs.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys

from pitcrew.supervisor.store.paths import resolve

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(verbose: bool = False, stderr: bool = False) -> None:
    root = logging.getLogger()
    if getattr(root, "_pitcrew_configured", False):
        return
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    log_file = resolve().log_file
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            log_file, maxBytes=2_000_000, backupCount=3, encoding="utf-8"
        )
        handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(handler)
    except OSError as exc:
        print(f"pitcrew: cannot write the log file {log_file}: {exc}", file=sys.stderr)
    if stderr:
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        console.setLevel(logging.DEBUG if verbose else logging.INFO)
        root.addHandler(console)
    # APScheduler logs every start, stop and job run at INFO: noise in a user's terminal
    logging.getLogger("apscheduler").setLevel(logging.DEBUG if verbose else logging.WARNING)
    root._pitcrew_configured = True  # type: ignore[attr-defined]
