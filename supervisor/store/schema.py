"""The shape of Pitcrew's machine-written files, checked field by field when they are read.

Why: `state.json` is JSON that parses is not the same as state Pitcrew can use. A number
where a list of deliveries belongs used to reach the supervisor loop and stop every start
with `'int' object is not iterable`. Every field is checked here, at the boundary, so the
rest of the code only ever sees the types the dataclasses promise.

A check is a function `(value, where) -> value` that returns the value (cleaned: unknown keys
of a record are dropped, so a file written by a newer Pitcrew still loads) or raises
`SchemaError` naming the field (`terminals.default:%3.restarts[1]: expected a number`).

One exception to "all or nothing": a queued delivery that does not read back is dropped on
its own and reported, rather than throwing away every incident, cooldown and other message
in the file. Everything else wrong means the file is set aside and Pitcrew starts afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pitcrew.supervisor.core.delivery import Status
from pitcrew.supervisor.core.health import Health
from pitcrew.supervisor.core.records import Badge, Phase

Check = Callable[[Any, str], Any]


class SchemaError(ValueError):
    """A field of a persisted file has the wrong type or value; the message names it."""


def _fail(where: str, expected: str, value: object) -> SchemaError:
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return SchemaError(f"{where}: expected {expected}, found {shown}")


def string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, "a string", value)
    return value


def boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, "true or false", value)
    return value


def integer(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, "a whole number", value)
    return value


def count(value: Any, where: str) -> int:
    if integer(value, where) < 0:
        raise _fail(where, "a number of at least 0", value)
    return int(value)


def number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(where, "a number", value)
    return float(value)


def timestamp(value: Any, where: str) -> float:
    """Seconds since the epoch that a calendar can show (1970 to the year 9999)."""
    seconds = number(value, where)
    if not 0 <= seconds < 253_402_300_800:
        raise _fail(where, "a time (seconds since 1970)", value)
    return seconds


def optional(check: Check) -> Check:
    def run(value: Any, where: str) -> Any:
        return None if value is None else check(value, where)
    return run


def one_of(values: Iterable[str]) -> Check:
    allowed = tuple(values)

    def run(value: Any, where: str) -> str:
        if value not in allowed:
            raise _fail(where, "one of " + ", ".join(allowed), value)
        return str(value)
    return run


def list_of(check: Check) -> Check:
    def run(value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise _fail(where, "a list", value)
        return [check(item, f"{where}[{i}]") for i, item in enumerate(value)]
    return run


def table_of(check: Check) -> Check:
    """A JSON object with any string keys, every value checked by `check`."""
    def run(value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _fail(where, "a table", value)
        return {str(k): check(v, f"{where}.{k}") for k, v in value.items()}
    return run


@dataclass(frozen=True, slots=True)
class Field:
    check: Check
    required: bool = False


def record(fields: Mapping[str, Field]) -> Check:
    """A JSON object with known keys: required ones must be there, absent optional ones stay
    absent (the dataclass default applies), unknown ones are dropped."""
    def run(value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _fail(where, "a table", value)
        out: dict[str, Any] = {}
        for name, spec in fields.items():
            if name in value:
                out[name] = spec.check(value[name], f"{where}.{name}" if where else name)
            elif spec.required:
                raise SchemaError(f"{where + '.' if where else ''}{name}: missing")
        return out
    return run


# -- state.json ------------------------------------------------------------------------------

# Field tables are kept by name: a test holds each to its dataclass, so a field added to
# a record and forgotten here fails a test instead of being dropped on the next load.
INCIDENT_FIELDS: Mapping[str, Field] = {
    "number": Field(integer, True), "prompt": Field(string, True),
    "opened_at": Field(number, True), "trigger": Field(string, True),
    "reason": Field(string, True), "attempts": Field(count),
    "phase": Field(one_of(p.value for p in Phase)), "next_at": Field(optional(number)),
    "hold": Field(optional(string)), "renewals": Field(count),
    "started_pid": Field(optional(integer)), "reset_at": Field(optional(number)),
    "limit_line": Field(optional(string)),
}
INCIDENT = record(INCIDENT_FIELDS)

TERMINAL_FIELDS: Mapping[str, Field] = {
    "terminal": Field(string, True), "agent": Field(string, True),
    "project": Field(string, True), "health": Field(one_of(h.value for h in Health)),
    "task": Field(optional(string)), "session_id": Field(optional(string)),
    "incident": Field(optional(INCIDENT)), "incidents_opened": Field(count),
    "generation": Field(count), "restarts": Field(list_of(number)),
    "crashes": Field(list_of(number)), "server": Field(optional(string)),
    "agent_started": Field(optional(number)), "agent_pid": Field(optional(count)),
}
TERMINAL = record(TERMINAL_FIELDS)

DELIVERY_FIELDS: Mapping[str, Field] = {
    "id": Field(string, True), "terminal": Field(string, True), "text": Field(string, True),
    "created_at": Field(number, True), "kind": Field(string), "attempts": Field(count),
    "status": Field(one_of(s.value for s in Status), True), "next_at": Field(number),
    "typed_at": Field(optional(number)), "seen_on": Field(optional(string)),
}
DELIVERY = record(DELIVERY_FIELDS)

SEATS = record({"holders": Field(table_of(string)), "terminals": Field(table_of(string))})

STATE = record({
    "version": Field(integer), "paused": Field(boolean), "consent": Field(boolean),
    "terminals": Field(table_of(TERMINAL)),
})


@dataclass(frozen=True, slots=True)
class CheckedState:
    data: dict[str, Any]              # the top level, checked
    extra: dict[str, Any]             # `extra`, its known keys checked, others kept as they are
    dropped: tuple[str, ...] = ()     # why each dropped delivery did not read back


def check_state(value: Any) -> CheckedState:
    """Check a parsed `state.json`; raises `SchemaError` when it cannot be used."""
    data = STATE(value, "")
    raw_extra = value.get("extra")
    if raw_extra is None:
        return CheckedState(data, {})
    if not isinstance(raw_extra, dict):
        raise _fail("extra", "a table", raw_extra)
    extra = dict(raw_extra)   # keys this version does not know belong to a later one: kept
    dropped: list[str] = []
    if "deliveries" in extra:
        entries = list_of(lambda v, w: v)(extra["deliveries"], "extra.deliveries")
        kept = []
        for i, entry in enumerate(entries):
            try:
                kept.append(DELIVERY(entry, f"extra.deliveries[{i}]"))
            except SchemaError as exc:
                dropped.append(str(exc))
        extra["deliveries"] = kept
    if "seats" in extra:
        extra["seats"] = SEATS(extra["seats"], "extra.seats")
    if "commands_offset" in extra:
        extra["commands_offset"] = count(extra["commands_offset"], "extra.commands_offset")
    if "consent_asked" in extra:
        extra["consent_asked"] = boolean(extra["consent_asked"], "extra.consent_asked")
    return CheckedState(data, extra, tuple(dropped))


# -- autopilot-ledger.jsonl, one row -----------------------------------------------------------

LEDGER_ROW_FIELDS: Mapping[str, Field] = {
    "kind": Field(one_of(["decision"]), True), "badge": Field(one_of(b.value for b in Badge), True),
    "at": Field(timestamp, True), "terminal": Field(string, True), "agent": Field(string, True),
    "prompt": Field(string, True), "project": Field(string, True),
    "trigger": Field(string, True), "reason": Field(string, True),
    "attempt": Field(count, True), "readings": Field(table_of(lambda v, w: v)),
}
LEDGER_ROW = record(LEDGER_ROW_FIELDS)
