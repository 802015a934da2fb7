"""A JSONL file other processes append to and the supervisor reads as it grows.

`pitcrew hook …` and `pitcrew autopilot pause|resume` append one JSON object per line (with
O_APPEND, so concurrent writers never interleave a line); the running supervisor keeps its
read offset and picks up only complete new lines. A line that does not parse is skipped.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class Spool:
    def __init__(self, path: Path, offset: int | None = None) -> None:
        """Read from `offset` (where a previous reader stopped), or only what comes next."""
        self.path = path
        self.offset = _size(path) if offset is None else offset

    def new_records(self) -> list[Mapping[str, Any]]:
        size = _size(self.path)
        if size < self.offset:      # replaced or truncated: start over
            self.offset = 0
        if size == self.offset:
            return []
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read(size - self.offset)
        end = data.rfind(b"\n") + 1      # keep a partial last line for next time
        self.offset += end
        out: list[Mapping[str, Any]] = []
        for raw in data[:end].splitlines():
            try:
                record = json.loads(raw)
            except ValueError:
                log.info("skipping a malformed line in %s", self.path.name)
                continue
            if isinstance(record, dict):
                out.append(record)
        return out


def append(path: Path, record: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
