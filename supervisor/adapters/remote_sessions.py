"""An agent's session id on a remote host, from the CLI's own files there.

The provider file's `[sessions]` table is used unchanged: its glob is expanded with the
remote agent's HOME and config-dir variables (as `adapters/sessions.py` does locally), the
files are listed with one remote `find … -printf '%T@ %p'` call, and the first lines of the
newest few are read with one `head` call. The pattern's wildcards are matched here, one path
component at a time, so `find` only narrows the walk. SQLite stores are not read remotely.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import shlex
from collections.abc import Mapping
from pathlib import Path

from pitcrew.supervisor.adapters import sessions
from pitcrew.supervisor.adapters.sessions import SessionRef
from pitcrew.supervisor.adapters.ssh import SshLink
from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.providers.model import SessionStore

log = logging.getLogger(__name__)

HEADS_AT_ONCE = 8      # newest files whose first lines are fetched in one call
_MAGIC = set("*?[")
_RECORD = "\x1e"       # between files in the heads fetched at once


def _split(pattern: str) -> tuple[str, list[str]]:
    """The fixed directory a pattern starts in, and the components after it."""
    parts = pattern.split("/")
    fixed: list[str] = []
    for part in parts:
        if _MAGIC & set(part):
            break
        fixed.append(part)
    return "/".join(fixed) or "/", parts[len(fixed):]


def _matches(path: str, pattern: str) -> bool:
    got, want = path.split("/"), pattern.split("/")
    return len(got) == len(want) and all(fnmatch.fnmatchcase(g, w)
                                         for g, w in zip(got, want, strict=True))


class RemoteSessions:
    def __init__(self, link: SshLink) -> None:
        self.link = link
        self.home = ""

    def remote_home(self) -> str:
        if not self.home:
            result = self.link.run('printf %s "$HOME"')
            self.home = result.stdout.decode("utf-8", "replace").strip()
        return self.home

    def find_session(self, store: SessionStore, cwd: str, environ: Mapping[str, str],
                     newer_than: float | None = None) -> SessionRef | None:
        """The newest session of this CLI for `cwd` on the host (see sessions.find_session);
        None when there is none, or the host cannot be asked right now."""
        try:
            return self._find(store, cwd, environ, newer_than)
        except TmuxError as exc:
            log.info("cannot look for sessions on %s: %s", self.link.host.name, exc)
            return None

    def _find(self, store: SessionStore, cwd: str, environ: Mapping[str, str],
              newer_than: float | None) -> SessionRef | None:
        if store.glob is None or store.sqlite is not None:
            return None
        home = Path(environ.get("HOME") or self.remote_home())
        cfg = sessions.config_dir(store, home, environ)
        pattern = sessions._expand(store.glob, store, cfg, home, cwd)
        base, rest = _split(pattern)
        if not rest:
            return None
        listed = self.link.run(
            f"find {shlex.quote(base)} -mindepth {len(rest)} -maxdepth {len(rest)} -type f "
            "-printf '%T@ %p\\n' 2>/dev/null; true")
        ranked: list[tuple[float, str]] = []
        for line in listed.stdout.decode("utf-8", "replace").splitlines():
            stamp, _, path = line.partition(" ")
            if path and _matches(path, pattern):
                try:
                    ranked.append((float(stamp), path))
                except ValueError:
                    continue
        ranked = sorted(ranked, reverse=True)[: store.scan_limit]
        if newer_than is not None:
            ranked = [r for r in ranked if r[0] >= newer_than - sessions.START_SLACK]
        for start in range(0, len(ranked), HEADS_AT_ONCE):
            batch = ranked[start:start + HEADS_AT_ONCE]
            heads = self._heads([p for _, p in batch])
            for mtime, path in batch:
                lines = heads.get(path, [])

                def head(_: str, lines: list[str] = lines) -> list[str]:
                    return lines
                if store.cwd is not None and not _same(
                        store, sessions._read_field(store.cwd, path, head), cwd):
                    continue
                sid = sessions._read_field(store.id, path, head)
                if sid:
                    return SessionRef(sid, path, mtime)
        return None

    def _heads(self, paths: list[str]) -> dict[str, list[str]]:
        script = "; ".join(
            f"printf '{_RECORD}%s\\n' {shlex.quote(p)}; head -c {sessions.HEAD_BYTES} -- "
            f"{shlex.quote(p)} 2>/dev/null | head -n {sessions.HEAD_LINES}" for p in paths)
        text = self.link.run(script + "; true").stdout.decode("utf-8", "replace")
        out: dict[str, list[str]] = {}
        for chunk in text.split(_RECORD)[1:]:
            path, _, body = chunk.partition("\n")
            out[path] = body.splitlines()
        return out


def _same(store: SessionStore, found: str | None, cwd: str) -> bool:
    if found is None:
        return False
    if store.cwd_hash == "sha256":
        return found == hashlib.sha256(cwd.encode()).hexdigest()
    return found.rstrip("/") == cwd.rstrip("/")
