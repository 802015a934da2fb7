"""The decision ledger: `autopilot-ledger.jsonl`, append-only, one JSON object a line.

Contract: a row is appended with one `write` of a whole line on a file opened in append mode,
then fsync'd, so a crash can at worst leave a torn *last* line; readers skip any line that
does not parse (and the next append starts on a fresh line, so a torn line never glues onto
a good one). The file is never rewritten. Reading the most recent rows seeks from the end, so
it costs the same for a ten-row ledger and a ten-year one.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from pitcrew.supervisor.core.records import Decision

log = logging.getLogger(__name__)

TAIL_CHUNK = 64 * 1024


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, decision: Decision) -> None:
        line = json.dumps(decision.to_json(), ensure_ascii=False, separators=(",", ":"))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if _ends_torn(fd):
                line = "\n" + line  # a crash left half a line: start ours on its own line
            os.write(fd, (line + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def tail(self, count: int = 5) -> list[Decision]:
        """The `count` most recent decisions, newest first; bad lines are skipped."""
        out: list[Decision] = []
        for raw in self._lines_backwards():
            decision = parse_line(raw)
            if decision is not None:
                out.append(decision)
                if len(out) >= count:
                    break
        return out

    def _lines_backwards(self) -> Iterator[bytes]:
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed in finally below
        except FileNotFoundError:
            return
        try:
            fh.seek(0, os.SEEK_END)
            pos = fh.tell()
            rest = b""
            while pos > 0:
                step = min(TAIL_CHUNK, pos)
                pos -= step
                fh.seek(pos)
                chunk = fh.read(step) + rest
                lines = chunk.split(b"\n")
                rest = lines[0]
                for raw in reversed(lines[1:]):
                    if raw.strip():
                        yield raw
            if rest.strip():
                yield rest
        finally:
            fh.close()


def parse_line(raw: bytes | str) -> Decision | None:
    try:
        data = json.loads(raw)
        return Decision.from_json(data)
    except (ValueError, KeyError, TypeError) as exc:
        log.debug("skipping a ledger line that does not parse: %s", exc)
        return None


def _ends_torn(fd: int) -> bool:
    size = os.fstat(fd).st_size
    if size == 0:
        return False
    return os.pread(fd, 1, size - 1) != b"\n"
