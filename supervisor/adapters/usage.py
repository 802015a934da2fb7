"""Reading token usage from an agent CLI's session file (`[usage]` in its provider file).

A session file only grows, so a `UsageReader` keeps how far it read each file and parses only
the lines appended since: the dashboard can ask every few seconds about a 50 MB transcript.
A file that shrank or was replaced is read again from the start; a one-document `.json`
session (Gemini's legacy format) is read whole when it changes. Lenient: an unreadable file
or line is no usage, never an error.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pitcrew.supervisor.adapters import sessions
from pitcrew.supervisor.core.usage import UsageFields, UsageStep, dig, extract
from pitcrew.supervisor.providers.model import Provider

log = logging.getLogger(__name__)

MAX_BYTES = 256 * 1024 * 1024   # a session file bigger than this is read from here on only


@dataclass(slots=True)
class _Seen:
    ino: int = -1
    offset: int = 0
    records: list[Mapping[str, object]] = field(default_factory=list)
    mtime: float = -1.0
    steps: tuple[UsageStep, ...] = ()


class UsageReader:
    def __init__(self) -> None:
        self._files: dict[str, _Seen] = {}
        self._paths: dict[tuple[str, str, str], str | None] = {}

    def for_session(self, provider: Provider, session_id: str | None, cwd: str,
                    home: Path | None = None, environ: Mapping[str, str] | None = None
                    ) -> tuple[UsageStep, ...] | None:
        """The usage steps of that session, or None when its CLI records no usage we read
        or its file is not found."""
        if provider.usage is None or not session_id or not cwd:
            return None
        key = (provider.name, session_id, cwd)
        path = self._paths.get(key)
        if path is None or not os.path.exists(path):
            path = sessions.session_file(provider.sessions, session_id, cwd, home, environ)
            self._paths[key] = path
        return self.steps(provider.usage, path) if path else None

    def steps(self, fields: UsageFields, path: str) -> tuple[UsageStep, ...]:
        try:
            st = os.stat(path)
        except OSError:
            return ()
        seen = self._files.get(path)
        if seen is None or seen.ino != st.st_ino or st.st_size < seen.offset:
            seen = self._files[path] = _Seen(st.st_ino, max(st.st_size - MAX_BYTES, 0))
        if st.st_mtime == seen.mtime and st.st_size == seen.offset:
            return seen.steps
        try:
            if path.endswith(".json"):
                seen.records = _document(path)
                seen.offset = st.st_size
            else:
                seen.offset = _append_lines(path, seen.offset, seen.records, fields)
        except OSError as exc:
            log.info("cannot read token usage from %s: %s", path, exc)
            return seen.steps
        seen.mtime = st.st_mtime
        seen.steps = tuple(extract(seen.records, fields))
        return seen.steps


def _append_lines(path: str, offset: int, out: list[Mapping[str, object]],
                  fields: UsageFields) -> int:
    """Parse the whole lines after `offset` that may carry usage into `out`; the new offset
    (a torn last line is left for next time)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read()
    end = data.rfind(b"\n") + 1
    for line in data[:end].split(b"\n"):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and (fields.expand or all(
                str(dig(value, p)) == v for p, v in fields.match)):
            out.append(_slim(value))
    return offset + end


_TEXT = frozenset({"content", "parts", "toolUseResult", "toolCalls", "thoughts"})


def _slim(rec: dict[str, object]) -> dict[str, object]:
    """A record without its text (what was said is not needed to count it): memory stays
    small for a long session."""
    out = {k: v for k, v in rec.items() if k not in _TEXT}
    msg = out.get("message")
    if isinstance(msg, dict):
        out["message"] = {k: v for k, v in msg.items() if k not in _TEXT}
    return out


def _document(path: str) -> list[Mapping[str, object]]:
    with open(path, "rb") as fh:
        try:
            value = json.loads(fh.read())
        except ValueError:
            return []
    return [value] if isinstance(value, dict) else []
