"""`state.json`: what must survive a crash of Pitcrew itself.

Per terminal: its incident (attempt count, phase, when the next step is due), pinned session
id, recent restarts and crashes, relaunch generation; globally: Autopilot's pause and the
screen-read consent. Written whole to a temporary file, fsync'd, and renamed over the old one,
so a reader sees the old state or the new one, never half of each. A file that cannot be
read, or whose fields do not have the shape `store.schema` gives them, is moved aside
(`state.json.corrupt-<time>`) — never deleted — and Pitcrew starts empty. A single queued
message that does not read back is dropped with one warning line instead.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pitcrew.supervisor.core.health import Health
from pitcrew.supervisor.core.records import Incident, Phase, TerminalState
from pitcrew.supervisor.store import schema

log = logging.getLogger(__name__)
VERSION = 1


@dataclass(frozen=True, slots=True)
class Snapshot:
    terminals: Mapping[str, TerminalState] = field(default_factory=dict)
    paused: bool = False
    consent: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)   # later features keep data here


@dataclass(frozen=True, slots=True)
class Loaded:
    snapshot: Snapshot
    problem: str | None = None


def save(path: Path, snap: Snapshot) -> None:
    data = {
        "version": VERSION,
        "paused": snap.paused,
        "consent": snap.consent,
        "terminals": {key: _terminal_json(t) for key, t in snap.terminals.items()},
        **({"extra": dict(snap.extra)} if snap.extra else {}),
    }
    write_json(path, data)


def write_json(path: Path, data: object) -> None:
    """Replace `path` with `data` as JSON, atomically: a temporary file in the same folder
    (created 0600: private to the user), fsync'd, renamed over the old one, and the folder
    fsync'd. A reader sees the old file or the new one, never half of each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def load(path: Path) -> Loaded:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Loaded(Snapshot())
    except OSError as exc:
        return Loaded(Snapshot(), f"{path.name}: cannot read: {exc.strerror}")
    try:
        checked = schema.check_state(json.loads(text))   # SchemaError is a ValueError
        data = checked.data
        terminals = {k: _terminal(v) for k, v in data.get("terminals", {}).items()}
        if checked.dropped:
            log.warning("%s: dropped %d queued message(s) that do not read back (%s)",
                        path.name, len(checked.dropped), "; ".join(checked.dropped))
        return Loaded(Snapshot(terminals, data.get("paused", False), data.get("consent", False),
                               checked.extra))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        with contextlib.suppress(OSError):
            os.replace(path, aside)
        return Loaded(Snapshot(), f"{path.name}: unreadable ({exc}); kept it as {aside.name} "
                      "and started with empty state")


def _terminal_json(t: TerminalState) -> dict[str, Any]:
    data = asdict(t)
    data["health"] = t.health.value
    if t.incident is not None:
        data["incident"]["phase"] = t.incident.phase.value
    data["restarts"] = list(t.restarts)
    data["crashes"] = list(t.crashes)
    return data


def _terminal(data: Mapping[str, Any]) -> TerminalState:
    inc = data.get("incident")
    incident = None
    if inc:
        incident = Incident(**{**inc, "phase": Phase(inc.get("phase", Phase.WAITING))})
    return TerminalState(
        terminal=str(data["terminal"]), agent=str(data["agent"]), project=str(data["project"]),
        health=Health(data.get("health", "working")), task=data.get("task"),
        session_id=data.get("session_id"), incident=incident,
        incidents_opened=int(data.get("incidents_opened", 0)),
        generation=int(data.get("generation", 0)),
        restarts=tuple(float(x) for x in data.get("restarts", ())),
        crashes=tuple(float(x) for x in data.get("crashes", ())),
        server=data.get("server"), agent_started=data.get("agent_started"),
        agent_pid=data.get("agent_pid"),
    )


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
