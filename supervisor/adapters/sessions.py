"""Finding an agent's session id from the CLI's own session files.

Each provider's `[sessions]` table says where its files live and how a working directory maps
to a session id (an escaped-cwd folder, a `cwd` field inside the file, or a SQLite query). The
newest matching session wins — unless another agent of the same CLI runs in the same
directory: then "newest" is a guess (every write of either agent makes its file the newest),
and `attribute` asks for facts instead (the file the process holds open, the id in its argv,
its pid recorded in the file); with none, it names its doubt and attributes nothing. Files are
read leniently: a torn, huge or unreadable file is skipped, never an error, and only the first
(and, for recorded pids, the last) lines of each file are read.
"""

from __future__ import annotations

import glob as globlib
import hashlib
import json
import logging
import os
import re
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from pitcrew.supervisor.adapters.ownership import OwnFacts
from pitcrew.supervisor.providers.model import FieldRef, SessionStore

log = logging.getLogger(__name__)

HEAD_LINES = 40          # lines read from a session file to find its id / cwd
HEAD_BYTES = 256 * 1024  # and never more than this
START_SLACK = 2.0        # seconds: a file's mtime and a process's start time come from two clocks


@dataclass(frozen=True, slots=True)
class SessionRef:
    session_id: str
    path: str
    mtime: float


@dataclass(frozen=True, slots=True)
class Attribution:
    ref: SessionRef | None
    doubt: str | None = None     # why no session could be called its own (two or more remain)


TAIL_BYTES = 64 * 1024   # the end of a file read for pids recorded there (a resumed session)


def config_dir(store: SessionStore, home: Path, environ: Mapping[str, str]) -> Path:
    if store.config_dir_env and environ.get(store.config_dir_env):
        return Path(environ[store.config_dir_env]).expanduser()
    raw = store.config_dir or "~"
    return home / raw[2:] if raw.startswith("~/") else (home if raw == "~" else Path(raw))


def escape_cwd(store: SessionStore, cwd: str) -> str:
    pattern, replacement = store.cwd_escape
    return re.sub(pattern, replacement, cwd)


def find_session(
    store: SessionStore,
    cwd: str,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    newer_than: float | None = None,
) -> SessionRef | None:
    """The newest session of this CLI for `cwd`, or None when there is none (or no store).

    `newer_than` (the agent process's start time) keeps only sessions written since the
    agent started: a fresh agent that has not written yet has no session, rather than a
    previous conversation's id, and two agents in one directory are not confused.
    """
    env = os.environ if environ is None else environ
    home = home or Path(env.get("HOME") or Path.home())
    cfg = config_dir(store, home, env)
    if store.sqlite is not None:
        return _from_sqlite(store, cfg, home, cwd)
    return next(_candidates(store, cfg, home, cwd, newer_than), None)


def _candidates(store: SessionStore, cfg: Path, home: Path, cwd: str,
                newer_than: float | None) -> Iterator[SessionRef]:
    """This CLI's sessions for `cwd`, newest first (written since `newer_than`)."""
    if store.glob is None:
        return
    pattern = _expand(store.glob, store, cfg, home, cwd)
    try:
        paths = globlib.glob(pattern)
    except (OSError, re.error):
        return
    ranked = sorted(((_mtime(p), p) for p in paths), reverse=True)[: store.scan_limit]
    if newer_than is not None:
        ranked = [item for item in ranked if item[0] >= newer_than - START_SLACK]
    for mtime, path in ranked:
        if mtime < 0:
            continue
        if store.cwd is not None and not _matches_cwd(store, _read_field(store.cwd, path), cwd):
            continue
        sid = _read_field(store.id, path)
        if sid:
            yield SessionRef(sid, path, mtime)


def attribute(store: SessionStore, cwd: str, facts: OwnFacts | Callable[[], OwnFacts],
              home: Path | None = None, environ: Mapping[str, str] | None = None,
              newer_than: float | None = None,
              taken: frozenset[str] = frozenset()) -> Attribution:
    """The session that is this process's own, by facts first: the file it holds open, the
    id in its argv (passed at launch, or `--resume <id>`), its pid recorded in the file; a
    file that records another pid is another agent's. The newest remaining session counts
    only when no other agent of this CLI runs in `cwd`; otherwise, with two or more left —
    or one that may be the other agent's — the doubt is named and nothing is attributed.
    `taken`: the sessions other live agents of this CLI in `cwd` are known to own; when every
    other agent's session is known, what is left is this one's as if it ran alone."""
    env = os.environ if environ is None else environ
    home = home or Path(env.get("HOME") or Path.home())
    cfg = config_dir(store, home, env)
    if store.sqlite is not None:
        newest = _from_sqlite(store, cfg, home, cwd)
        if newest is None:
            return Attribution(None)
        facts = facts() if callable(facts) else facts   # read only when a session is there
        return Attribution(None, _doubt(cwd, facts.peers)) if facts.peers else \
            Attribution(newest)
    found = list(_candidates(store, cfg, home, cwd, newer_than))
    if not found:
        return Attribution(None)
    facts = facts() if callable(facts) else facts
    if facts.pid is None:
        return Attribution(found[0])
    own = [r for r in found if r.path in facts.open_files] or \
        [r for r in found if _in_argv(r.session_id, facts.argv)]
    recorded = {r.path: _recorded_pids(r.path) for r in found}
    own = own or [r for r in found if facts.pid in recorded[r.path]]
    if len(own) == 1:
        return Attribution(own[0])
    left = own or [r for r in found if not recorded[r.path] and r.session_id not in taken]
    if not left:
        return Attribution(None)
    if facts.peers <= len(taken):   # alone here, or every other agent's session is known:
        return Attribution(left[0])   # its newest left (a /clear starts another file)
    return Attribution(None, _doubt(cwd, facts.peers, len(left)))


def _doubt(cwd: str, peers: int, sessions: int = 1) -> str:
    return (f"{peers + 1} agents of this CLI run in {cwd} and {sessions} of its sessions "
            "there could be this one's: which is its own is not known, so Pitcrew does not "
            "guess")


def _in_argv(session_id: str, argv: tuple[str, ...]) -> bool:
    return any(arg == session_id or arg.endswith(("=" + session_id, ":" + session_id))
               for arg in argv)


def _recorded_pids(path: str) -> frozenset[int]:
    """Pids the CLI wrote into its session file (a `pid` field of a JSON line), at its start
    and at its end (a resumed session records the new process there)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(size - TAIL_BYTES, len(head)))
            tail = fh.read(TAIL_BYTES)
    except OSError:
        return frozenset()
    pids: set[int] = set()
    for line in (head + b"\n" + tail).decode("utf-8", "replace").split("\n"):
        if '"pid"' not in line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        pid = value.get("pid") if isinstance(value, dict) else None
        if isinstance(pid, int) and not isinstance(pid, bool):
            pids.add(pid)
    return frozenset(pids)


def session_exists(store: SessionStore, session_id: str, cwd: str,
                   home: Path | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether a session with this id is on disk for `cwd` (gate before `resume <id>`)."""
    env = os.environ if environ is None else environ
    home = home or Path(env.get("HOME") or Path.home())
    if store.sqlite is not None or store.glob is None:
        found = find_session(store, cwd, home, env)
        return found is not None and found.session_id == session_id
    cfg = config_dir(store, home, env)
    for path in globlib.glob(_expand(store.glob, store, cfg, home, cwd)):
        if _read_field(store.id, path) == session_id:
            return True
    return False


def session_file(store: SessionStore, session_id: str, cwd: str, home: Path | None = None,
                 environ: Mapping[str, str] | None = None) -> str | None:
    """The file of the session with this id for `cwd` (for its token usage), or None."""
    env = os.environ if environ is None else environ
    home = home or Path(env.get("HOME") or Path.home())
    if store.glob is None or not session_id:
        return None
    try:
        paths = globlib.glob(_expand(store.glob, store, config_dir(store, home, env), home, cwd))
    except (OSError, re.error):
        return None
    for path in sorted(paths, key=_mtime, reverse=True)[: store.scan_limit]:
        if _read_field(store.id, path) == session_id:
            return path
    return None


def _expand(template: str, store: SessionStore, cfg: Path, home: Path, cwd: str) -> str:
    values = {
        "home": str(home),
        "config_dir": str(cfg),
        "cwd": globlib.escape(cwd),
        "cwd_escaped": globlib.escape(escape_cwd(store, cwd)),
        "cwd_basename": globlib.escape(os.path.basename(cwd.rstrip("/")) or "/"),
        "cwd_sha256": hashlib.sha256(cwd.encode()).hexdigest(),
        "cwd_md5": hashlib.md5(cwd.encode(), usedforsecurity=False).hexdigest(),
        "cwd_urlencoded": globlib.escape(urllib.parse.quote(cwd, safe="")),
    }
    expanded = template.format_map(values)
    if expanded.startswith("~/"):
        expanded = str(home / expanded[2:])
    return expanded


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return -1.0


def _matches_cwd(store: SessionStore, found: str | None, cwd: str) -> bool:
    if store.cwd_hash == "sha256":
        return found is not None and found in {
            hashlib.sha256(c.encode()).hexdigest() for c in {cwd, os.path.realpath(cwd)}}
    return _same_dir(found, cwd)


def _same_dir(found: str | None, cwd: str) -> bool:
    if not found:
        return False
    if found.rstrip("/") == cwd.rstrip("/"):
        return True
    try:
        return os.path.realpath(found) == os.path.realpath(cwd)
    except OSError:
        return False


def _local_head(path: str) -> list[str]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(HEAD_BYTES)
    except OSError:
        return []
    return raw.decode("utf-8", "replace").splitlines()[:HEAD_LINES]


def _dig(obj: object, dotted: str) -> object:
    for key in dotted.split("."):
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def _read_field(ref: FieldRef, path: str,
                head: Callable[[str], list[str]] | None = None) -> str | None:
    """`head`: how the file's first lines are read (adapters/remote_sessions.py reads them
    over ssh); the local file by default."""
    _head = head or _local_head
    p = Path(path)
    if ref.kind == "stem":
        return p.stem
    if ref.kind == "parent":
        return p.parent.name
    if ref.kind == "regex":
        m = re.search(ref.arg, path)
        return m.group(1) if m else None
    if ref.kind == "json":
        lines = _head(path)
        for line in lines:
            try:
                value = _dig(json.loads(line), ref.arg)
            except ValueError:
                continue  # torn or non-JSON line
            if isinstance(value, str) and value:
                return value
        try:  # a pretty-printed JSON document rather than JSON lines
            value = _dig(json.loads("\n".join(lines)), ref.arg)
        except ValueError:
            return None
        return value if isinstance(value, str) and value else None
    if ref.kind == "yaml":
        rx = re.compile(rf"^{re.escape(ref.arg)}:\s*['\"]?(.*?)['\"]?\s*$")
        for line in _head(path):
            m = rx.match(line)
            if m and m.group(1):
                return m.group(1)
        return None
    return None


def _from_sqlite(store: SessionStore, cfg: Path, home: Path, cwd: str) -> SessionRef | None:
    assert store.sqlite is not None
    db = store.sqlite.path.replace("{config_dir}", str(cfg)).replace("{home}", str(home))
    if db.startswith("~/"):
        db = str(home / db[2:])
    if not os.path.exists(db):
        return None
    import sqlite3  # here: only a few providers keep sessions in SQLite (saves `status` ~10 ms)

    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
        try:
            row = conn.execute(store.sqlite.query, (cwd,)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        log.info("cannot read sessions from %s: %s", db, exc)
        return None
    if not row or row[0] is None:
        return None
    return SessionRef(str(row[0]), db, _mtime(db))
