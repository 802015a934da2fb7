"""The decision ledger: `autopilot-ledger.jsonl`, append-only, one JSON object a line.

Contract: a row is appended with one `write` of a whole line on a file opened in append mode,
then fsync'd, so a crash can at worst leave a torn *last* line; readers skip any line that
does not parse (and the next append starts on a fresh line, so a torn line never glues onto
a good one). The file is never rewritten. Reading the most recent rows seeks from the end, so
it costs the same for a ten-row ledger and a ten-year one.

Rotation (rows are ~250 bytes; a busy year would otherwise fill the disk): when an append
would take the file past `max_bytes` (20 MB), the file is *renamed* to
`autopilot-ledger.1.jsonl` and a fresh one is started; that file is then gzip-compressed to
`autopilot-ledger.1.jsonl.gz` (written aside, fsync'd, renamed) and only then unlinked.
Older ones move up a number first (`.1` → `.2` …); beyond `keep` (5) the oldest is deleted.
No row is ever edited. A crash at any step leaves every row readable: a `.1.jsonl` left
uncompressed is read as it is (and compressed at the next rotation), and a gap in the
numbers is skipped. `tail` reads across the boundary: the live file first, then `.1`, `.2` …
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import os
import shutil
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from pitcrew.supervisor.core.records import Decision
from pitcrew.supervisor.core.redact import redact
from pitcrew.supervisor.store import schema

log = logging.getLogger(__name__)

TAIL_CHUNK = 64 * 1024
MAX_BYTES = 20 * 1024 * 1024     # the live file is rotated before it grows past this
KEEP = 5                         # rotated files kept (compressed); older ones are deleted
MAX_BACKLOG = 10_000             # rows kept in memory while the disk refuses them


class Ledger:
    def __init__(self, path: Path, max_bytes: int = MAX_BYTES, keep: int = KEEP) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        self._lock = threading.Lock()   # one supervisor writes, possibly from two threads
        self._backlog: list[bytes] = []   # rows the disk refused, oldest first
        self._said = False

    def rotated(self, n: int) -> Path:
        """The n-th rotated file (1 = the newest), compressed."""
        return self.path.with_name(f"{self.path.stem}.{n}{self.path.suffix}.gz")

    @property
    def failing(self) -> bool:
        """Rows are waiting in memory: the disk refused the last write."""
        return bool(self._backlog)

    def append(self, decision: Decision) -> None:
        """Append one row. A disk that refuses it (full, read-only) does not raise: the row
        waits in memory, in order, said once, and is written by the next append or `flush`
        that succeeds."""
        line = json.dumps(recordable(decision.to_json()), ensure_ascii=False,
                          separators=(",", ":"))
        with self._lock:
            if len(self._backlog) < MAX_BACKLOG:
                self._backlog.append((line + "\n").encode("utf-8"))
            self._flush()

    def flush(self) -> bool:
        """Write the rows waiting in memory; whether none is left."""
        with self._lock:
            self._flush()
            return not self._backlog

    def _flush(self) -> None:
        try:
            while self._backlog:
                self._write(self._backlog[0])
                self._backlog.pop(0)
        except OSError as exc:
            if not self._said:
                log.error("cannot write the ledger %s (%s): keeping its rows in memory until "
                          "it can", self.path, exc.strerror or exc)
            self._said = True
            return
        if self._said:
            log.warning("ledger: writing again; caught up")
        self._said = False

    def _write(self, data: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        size = _size(self.path)
        if size and size + len(data) + 1 > self.max_bytes:
            self._rotate()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if _ends_torn(fd):
                data = b"\n" + data  # a crash left half a line: ours starts on its own
            view = memoryview(data)
            while view:                # a short write (a disk filling up): write the rest
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)

    def tail(self, count: int = 5) -> list[Decision]:
        """The `count` most recent decisions, newest first, across rotated files; bad lines
        are skipped."""
        out: list[Decision] = []
        for raw in self._lines_backwards(self.path):
            decision = parse_line(raw)
            if decision is not None:
                out.append(decision)
                if len(out) >= count:
                    return out
        for older in self._older_files():
            out.extend(_newest_in(older, count - len(out)))
            if len(out) >= count:
                break
        return out

    def read_all(self, since: float | None = None) -> tuple[list[dict[str, object]], int]:
        """Every row as its raw JSON object, oldest first, across rotated files, and how many
        lines were skipped (torn, not JSON, not an object). Rows are not checked against the
        decision schema: the incident report reads kinds and badges added after it leniently.
        `since`: a rotated file last written before then holds only older rows; it is not
        read (rows in the files that are read are all returned)."""
        rows: list[dict[str, object]] = []
        skipped = 0
        older = [p for p in self._older_files() if since is None or _mtime(p) >= since]
        for path in [*reversed(older), self.path]:
            opener = gzip.open if path.suffix == ".gz" else open
            try:
                with opener(path, "rb") as fh:
                    for raw in fh:
                        if not raw.strip():
                            continue
                        try:
                            value = readable(json.loads(raw))
                        except ValueError:
                            value = None
                        if isinstance(value, dict):
                            rows.append(value)
                        else:
                            skipped += 1
            except FileNotFoundError:
                continue
            except (OSError, EOFError) as exc:       # a truncated .gz: keep what was read
                log.warning("ledger: %s ends early (%s); reading what is there", path.name, exc)
        return rows, skipped

    # -- rotation ------------------------------------------------------------------------------

    def _pending(self) -> Path:
        """The live file just renamed aside, before (or while) it is compressed."""
        return self.path.with_name(f"{self.path.stem}.1{self.path.suffix}")

    def _older_files(self) -> Iterator[Path]:
        """Rotated files, newest first; `.1.jsonl` stands for `.1.jsonl.gz` until that is
        complete (after a crash mid-compression both may exist, with the same rows)."""
        first = self.rotated(1)
        if not first.exists() and self._pending().exists():
            yield self._pending()
        for n in range(1, self.keep + 1):
            if self.rotated(n).exists():
                yield self.rotated(n)

    def _rotate(self) -> None:
        self._finish_pending()                       # a crash left `.1.jsonl` behind
        with contextlib.suppress(FileNotFoundError):
            self.rotated(self.keep).unlink()
        for n in range(self.keep - 1, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                os.replace(self.rotated(n), self.rotated(n + 1))
        os.replace(self.path, self._pending())       # a rename: no row is rewritten
        _fsync_dir(self.path.parent)
        self._finish_pending()
        log.info("ledger: rotated %s to %s", self.path.name, self.rotated(1).name)

    def _finish_pending(self) -> None:
        pending, target = self._pending(), self.rotated(1)
        if not pending.exists():
            return
        if not target.exists():
            part = target.with_name(target.name + ".part")
            with open(pending, "rb") as src, open(part, "wb") as raw:
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
                    shutil.copyfileobj(src, gz)
                raw.flush()
                os.fsync(raw.fileno())
            os.replace(part, target)
            _fsync_dir(self.path.parent)
        pending.unlink()

    def _lines_backwards(self, path: Path) -> Iterator[bytes]:
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed in finally below
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


# -- what may be written, and what a reader gets -----------------------------------------------

VERBATIM = frozenset({"kind", "badge", "at", "terminal", "attempt"})   # ours, never a secret


def recordable(row: dict[str, object]) -> dict[str, object]:
    """A row as it may be written: every text the agent or the user wrote (prompt, reason,
    readings: a screen's last words, evidence) with its secrets replaced by `[redacted]`, as
    checkers get it — the ledger is kept for months and the report made from it is mailed —
    and with no lone surrogate (from a hook's JSON or odd terminal bytes), which UTF-8 cannot
    hold and which would make the row unwritable."""
    return {k: readable(v) if k in VERBATIM else _redacted(v) for k, v in row.items()}


def readable(value: object) -> object:
    """`value` with every string's lone surrogates turned into their escape text (`\\ud800`):
    a row a JSON file may legally hold is printable and writable by every reader."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8") \
            if not value.isascii() else value
    if isinstance(value, dict):
        return {readable(k): readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [readable(v) for v in value]
    return value


def _redacted(value: object) -> object:
    if isinstance(value, str):
        return redact(str(readable(value)))
    if isinstance(value, dict):
        return {readable(k): _redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(v) for v in value]
    return value


def parse_line(raw: bytes | str) -> Decision | None:
    try:
        return Decision.from_json(schema.LEDGER_ROW(readable(json.loads(raw)), "row"))
    except (ValueError, KeyError, TypeError) as exc:
        log.debug("skipping a ledger line that does not parse: %s", exc)
        return None


def _newest_in(path: Path, count: int) -> list[Decision]:
    """The `count` newest decisions in a rotated file, newest first. A gzip file cannot be
    read from its end, so it is streamed once; only `count` rows are kept."""
    opener = gzip.open if path.suffix == ".gz" else open
    newest: deque[Decision] = deque(maxlen=max(count, 0))
    try:
        with opener(path, "rb") as fh:
            for raw in fh:
                decision = parse_line(raw)
                if decision is not None:
                    newest.append(decision)
    except FileNotFoundError:
        return []       # rotated away while we read: a newer file already had its rows
    except (OSError, EOFError) as exc:       # a truncated .gz: keep what was read
        log.warning("ledger: %s ends early (%s); reading what is there", path.name, exc)
    return list(reversed(newest))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("inf")     # gone or unreadable: let the reader find out


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _ends_torn(fd: int) -> bool:
    size = os.fstat(fd).st_size
    if size == 0:
        return False
    return os.pread(fd, 1, size - 1) != b"\n"
