"""Seats: named roles in the team chart (`[[seats]]` in config.toml).

A seat has a working directory, a primary agent and ordered backups (provider + optional
model), and an optional brief. A terminal sits in a seat when Pitcrew launched it for the
seat or the user bound it; when the seated agent cannot go on (a usage or login limit, or a
pane Autopilot cannot resume), the next installed backup takes the seat. Which agent holds a
seat is state (state.json), not config: nothing ever switches back by itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pitcrew.supervisor.core.timeouts import Overrides, parse_overrides

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True, slots=True)
class AgentChoice:
    provider: str
    model: str | None = None

    def label(self) -> str:
        return f"{self.provider}:{self.model}" if self.model else self.provider


@dataclass(frozen=True, slots=True)
class Seat:
    name: str
    cwd: str
    primary: AgentChoice
    backups: tuple[AgentChoice, ...] = ()
    brief: str | None = None
    session: str | None = None      # tmux session its windows open in (default: the seat name)
    timeouts: Overrides = ()        # this seat's task timeouts (core.timeouts), over the rest
    host: str | None = None         # the remote host `pitcrew launch` opens it on (core/hosts)

    @property
    def agents(self) -> tuple[AgentChoice, ...]:
        return (self.primary, *self.backups)


def parse_choice(value: Any) -> AgentChoice:
    """`"codex"`, `"codex:gpt-5"` or `{provider = "codex", model = "gpt-5"}`."""
    if isinstance(value, str) and value.strip():
        provider, _, model = value.strip().partition(":")
        return AgentChoice(provider.strip(), model.strip() or None)
    if isinstance(value, dict) and isinstance(value.get("provider"), str):
        raw_model = value.get("model")
        if raw_model is not None and not isinstance(raw_model, str):
            raise ValueError(f"model must be a string, got {raw_model!r}")
        return AgentChoice(value["provider"], raw_model or None)
    raise ValueError(f'expected "provider" or "provider:model", got {value!r}')


def parse_seats(raw: Any, where: str, known: Sequence[str] | None = None
                ) -> tuple[tuple[Seat, ...], list[str]]:
    """The seats that parse, and one line per problem (a bad seat is skipped, not fatal)."""
    errors: list[str] = []
    if not isinstance(raw, list):
        return (), [f"{where}: seats: expected [[seats]] tables"]
    seats: list[Seat] = []
    for n, item in enumerate(raw, 1):
        label = f"{where}: seats[{n}]"
        if not isinstance(item, dict):
            errors.append(f"{label}: expected a table")
            continue
        try:
            seat = _seat(item, known)
        except ValueError as exc:
            errors.append(f"{label}: {exc}")
            continue
        if any(s.name == seat.name for s in seats):
            errors.append(f"{label}: a seat named {seat.name!r} already exists")
            continue
        seats.append(seat)
    return tuple(seats), errors


def _seat(item: dict[str, Any], known: Sequence[str] | None) -> Seat:
    unknown = set(item) - {"name", "cwd", "primary", "backups", "brief", "session", "timeouts",
                           "host"}
    if unknown:
        raise ValueError(f"{sorted(unknown)[0]}: unknown key")
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name: expected a short name (letters, digits, - _ .), got {name!r}")
    cwd = item.get("cwd")
    if not isinstance(cwd, str) or not cwd.strip():
        raise ValueError("cwd: expected the seat's working directory")
    if "primary" not in item:
        raise ValueError("primary: missing (the seat's first agent, e.g. \"claude\")")
    primary = parse_choice(item["primary"])
    backups_raw = item.get("backups", [])
    if not isinstance(backups_raw, list):
        raise ValueError("backups: expected a list")
    backups = tuple(parse_choice(b) for b in backups_raw)
    for choice in (primary, *backups):
        if known is not None and choice.provider not in known:
            raise ValueError(f"no provider named {choice.provider!r} (see `pitcrew providers`)")
    brief = item.get("brief")
    if brief is not None and not isinstance(brief, str):
        raise ValueError("brief: expected a string")
    session = item.get("session")
    if session is not None and not isinstance(session, str):
        raise ValueError("session: expected a tmux session name")
    timeouts: Overrides = ()
    if "timeouts" in item:
        timeouts, problems = parse_overrides(item["timeouts"])
        if problems:
            raise ValueError(f"timeouts: {problems[0]}")
    host = item.get("host")
    if host is not None and not isinstance(host, str):
        raise ValueError("host: expected a host name from [[hosts]]")
    return Seat(name, cwd, primary, backups, brief, session, timeouts,
                None if host in (None, "", "local") else host)
