"""Logging is configured here and only here (entry points call `setup_logging`).

Logs are for people: a rotating file in the log dir always, plus stderr for `pitcrew watch`.
State is never read back from logs.

The file is opened at the first record, not at setup: a command that logs nothing (most
`pitcrew status` runs) neither creates it nor imports logging.handlers (pickle, socket,
queue …), a good part of a short command's start-up.
"""

from __future__ import annotations

import logging
import sys

from pitcrew.supervisor.store.paths import resolve

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _FileOnFirstRecord(logging.Handler):
    """A RotatingFileHandler made when the first record arrives; a file that cannot be
    written is said once on stderr and the records are dropped."""

    def __init__(self) -> None:
        super().__init__()
        self._file: logging.Handler | None = None
        self._failed = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._file is None and not self._failed:
            import logging.handlers

            log_file = resolve().log_file
            try:
                log_file.parent.mkdir(parents=True, exist_ok=True)
                self._file = logging.handlers.RotatingFileHandler(
                    log_file, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
            except OSError as exc:
                self._failed = True
                print(f"pitcrew: cannot write the log file {log_file}: {exc}", file=sys.stderr)
                return
            self._file.setFormatter(logging.Formatter(FORMAT))
        if self._file is not None:
            self._file.handle(record)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        super().close()


def setup_logging(verbose: bool = False, stderr: bool = False) -> None:
    root = logging.getLogger()
    if getattr(root, "_pitcrew_configured", False):
        return
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    root.addHandler(_FileOnFirstRecord())
    if stderr:
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        console.setLevel(logging.DEBUG if verbose else logging.INFO)
        root.addHandler(console)
    # APScheduler logs every start, stop and job run at INFO: noise in a user's terminal
    logging.getLogger("apscheduler").setLevel(logging.DEBUG if verbose else logging.WARNING)
    root._pitcrew_configured = True  # type: ignore[attr-defined]
