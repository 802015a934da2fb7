"""`fleet.json`: the fleet record (core/fleet.py), per tmux server socket, next to state.json.

Machine-written and replaced atomically (`state_store.write_json`, created 0600: it holds the
agents' environments, API keys included). A file that cannot be read back is one line for
the caller and never a traceback; the watcher moves it aside (`fleet.json.corrupt-<time>`,
never deleted) and starts an empty record, `pitcrew restore` leaves it where it is.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pitcrew.supervisor.core.fleet import AgentPlace, Launched, PanePlace, WindowPlace
from pitcrew.supervisor.store.state_store import write_json

VERSION = 1
Record = Mapping[str, tuple[WindowPlace, ...]]     # socket label → its windows


@dataclass(frozen=True, slots=True)
class Loaded:
    record: Record = field(default_factory=dict)
    problem: str | None = None


def save(path: Path, record: Record) -> None:
    write_json(path, {"version": VERSION, "sockets": {
        label: [window_json(w) for w in windows] for label, windows in record.items()}})


def load(path: Path, move_aside: bool = False) -> Loaded:
    """The record; with a `problem` line (and an empty record) when it does not read back."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Loaded()
    except OSError as exc:
        return Loaded(problem=f"{path.name}: cannot read: {exc.strerror or exc}")
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"not a version {VERSION} fleet record")
        sockets = data["sockets"]
        if not isinstance(sockets, dict):
            raise ValueError("sockets: expected a table")
        record = {str(label): tuple(window(w) for w in _list(windows))
                  for label, windows in sockets.items()}
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        where = f"{path.name}: unreadable ({exc})"
        if not move_aside:
            return Loaded(problem=f"{where}; nothing restored from it")
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        with contextlib.suppress(OSError):
            os.replace(path, aside)
        return Loaded(problem=f"{where}; kept it as {aside.name} and started a new record")
    return Loaded(record)


def window_json(w: WindowPlace) -> dict[str, Any]:
    return {"session": w.session, "index": w.index, "name": w.name, "layout": w.layout,
            "server": w.server, "panes": [{"index": p.index, "cwd": p.cwd} for p in w.panes],
            "agents": [{"pane": a.pane, "provider": a.provider, "agent": a.agent,
                        "session_id": a.session_id, "task": a.task,
                        "launch": {"style": a.launch.style, "program": list(a.launch.program),
                                   "cwd": a.launch.cwd, "env": dict(a.launch.env),
                                   "shell": a.launch.shell}} for a in w.agents]}


def window(data: Any) -> WindowPlace:
    """The inverse of `window_json`; raises ValueError (or TypeError, KeyError) on anything
    else."""
    return WindowPlace(
        _str(data["session"]), _int(data["index"]), _str(data["name"]), _str(data["layout"]),
        tuple(PanePlace(_int(p["index"]), _str(p["cwd"])) for p in _list(data["panes"])),
        tuple(_agent(a) for a in _list(data["agents"])), _str(data["server"]))


def _agent(data: Any) -> AgentPlace:
    launch = data["launch"]
    env = launch["env"]
    if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ValueError("env must map strings to strings")
    style = _str(launch["style"])
    if style not in ("shell", "pane"):
        raise ValueError(f"unknown launch style {style!r}")
    program = tuple(_str(p) for p in _list(launch["program"]))
    if not program:
        raise ValueError("a launch without a program")
    return AgentPlace(_int(data["pane"]), _str(data["provider"]),
                      Launched(style, program, _str(launch["cwd"]), dict(env),
                               _opt(launch.get("shell"))),
                      _opt(data.get("session_id")), _opt(data.get("task")),
                      _str(data.get("agent", "")))


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {type(value).__name__}")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def _opt(value: Any) -> str | None:
    return None if value is None else _str(value)


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected a whole number, got {value!r}")
    return value
