"""The running supervisor's `View`, published as a file for a tray app that only relays.

One supervisor acts per user (store/lock.py). When `pitcrew watch` holds the lock, a tray
app started beside it cannot build a view of its own (it watches nothing); it shows the
watcher's instead. The watcher writes each `View` it publishes (at most a few a second, and
every few seconds anyway) into `view.json` in the data folder, atomically; the app reads it
when it changed. The file names the writer's pid, so a file left by a supervisor that died is
never mistaken for the current holder's view.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pitcrew.supervisor.api.view import (
    CheckerView,
    DecisionView,
    HostView,
    Limits,
    SettingsView,
    TerminalView,
    View,
)

log = logging.getLogger("pitcrew")

NAME = "view.json"
VERSION = 1


def path_in(data_dir: Path) -> Path:
    return data_dir / NAME


@dataclass(frozen=True, slots=True)
class Published:
    pid: int          # the supervisor that wrote it
    view: View


def to_json(view: View) -> dict[str, Any]:
    """The view as JSON data (tuples become lists, each record an object)."""
    data: dict[str, Any] = json.loads(dumps(view))
    return data


def dumps(view: View) -> str:
    # json walks the tuples itself and asks `_fields` only for each record: several times
    # faster than dataclasses.asdict, which deep-copies every value first
    return json.dumps(view, default=_fields, ensure_ascii=False, separators=(",", ":"))


def _fields(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):            # View.models
        return dict(obj)
    raise TypeError(f"{type(obj).__name__} is not part of a view")


def from_json(data: dict[str, Any]) -> View:
    """The View in `data`; raises ValueError on a shape it does not have."""
    try:
        view: View = _make(View, data, {
            "terminals": _many(TerminalView), "decisions": _many(DecisionView),
            "activity": _many(DecisionView), "candidates": _many(CheckerView),
            "hosts": _many(HostView), "limits": lambda v: _make(Limits, v, {}),
            "settings": lambda v: _make(SettingsView, v, {"checkers": _many(CheckerView)}),
            "models": lambda v: None if v is None else {str(k): tuple(m)
                                                         for k, m in dict(v).items()},
        })
        return view
    except (TypeError, AttributeError, KeyError) as exc:
        raise ValueError(f"not a view: {exc}") from None


def _make(cls: Any, data: Any, nested: dict[str, Callable[[Any], Any]]) -> Any:
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__}: not an object")
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: nested.get(k, _tuples)(v) for k, v in data.items() if k in known})


def _many(cls: Any) -> Callable[[Any], tuple[Any, ...]]:
    return lambda items: tuple(_make(cls, item, {}) for item in items)


def _tuples(value: Any) -> Any:
    """JSON lists back into the tuples a View holds (a timeline is tuples of tuples)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def write(path: Path, view: View, pid: int | None = None) -> None:
    """Replace the file atomically: a reader sees the old view or the new one, never half.
    No fsync: after a crash the file is stale anyway (its pid no longer holds the lock)."""
    head = json.dumps({"version": VERSION, "pid": os.getpid() if pid is None else pid})
    text = f'{head[:-1]},"view":{dumps(view)}}}'
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".view-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read(path: Path) -> Published | None:
    """The published view, or None (no file, or not one this version can read)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(record, dict) or record.get("version") != VERSION:
            return None
        return Published(int(record["pid"]), from_json(record["view"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


class Publisher:
    """What `pitcrew watch` hands the supervisor as its `publish`: each View to the file (the
    supervisor already throttles publishing). A disk that refuses the write costs the tray
    app its view, never the watcher: said once, and again when writing works."""

    def __init__(self, data_dir: Path) -> None:
        self.path = path_in(data_dir)
        self.failing = False

    def __call__(self, view: View) -> None:
        try:
            write(self.path, view)
        except OSError as exc:
            if not self.failing:
                log.warning("cannot publish the view for a tray app in %s: %s",
                            self.path.parent, exc.strerror or exc)
            self.failing = True
            return
        if self.failing:
            log.info("the view for a tray app is published again")
        self.failing = False

    def remove(self) -> None:
        """On a clean stop: no view is left behind for a supervisor that is gone."""
        with contextlib.suppress(OSError):
            self.path.unlink()


class Follower:
    """Reads the published view again only when the file changed (a stat per look)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = path_in(data_dir)
        self._seen: tuple[int, int, int] | None = None

    def changed(self) -> Published | None:
        try:
            st = os.stat(self.path)
        except OSError:
            self._seen = None
            return None
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp == self._seen:
            return None
        published = read(self.path)
        if published is not None:
            self._seen = stamp
        return published
