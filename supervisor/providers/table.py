"""A provider file's tables, read strictly: each getter checks its type, a table rejects
keys it never asked for, and every failure names the file and the dotted field — the one line
a user sees for a broken provider file (loader.py builds the records from these)."""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable, Mapping
from typing import Any

from pitcrew.supervisor.core.errors import ConfigError
from pitcrew.supervisor.core.rules import Command
from pitcrew.supervisor.providers.model import PLACEHOLDERS

REQUIRED = object()   # a getter's default that makes the key required


class Table:
    """A TOML table read strictly: typed getters, and `done()` rejects unknown keys."""

    def __init__(self, data: Any, where: str, path: str = "") -> None:
        if not isinstance(data, Mapping):
            raise ConfigError(where, f"{path or 'file'}: expected a table")
        self.data = data
        self.where = where
        self.path = path
        self.seen: set[str] = set()

    def field(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(self.where, f"{self.field(key)}: {message}")

    def _get(self, key: str, default: Any, kinds: tuple[type, ...], label: str) -> Any:
        self.seen.add(key)
        if key not in self.data:
            if default is REQUIRED:
                raise self.fail(key, "missing")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in kinds:
            raise self.fail(key, f"expected {label}, got {value!r}")
        if not isinstance(value, kinds):
            raise self.fail(key, f"expected {label}, got {type(value).__name__}")
        return value

    def text(self, key: str, default: Any = None) -> Any:
        return self._get(key, default, (str,), "a string")

    def integer(self, key: str, default: Any = None) -> Any:
        return self._get(key, default, (int,), "an integer")

    def number(self, key: str, default: Any = None) -> Any:
        return float(self._get(key, default, (int, float), "a number"))

    def flag(self, key: str, default: Any = None) -> Any:
        return self._get(key, default, (bool,), "true or false")

    def strings(self, key: str, default: Any = ()) -> tuple[str, ...]:
        value = self._get(key, default, (list, tuple), "a list of strings")
        if value is None:
            return None  # type: ignore[return-value]  # only when the caller passed None
        if not all(isinstance(v, str) for v in value):
            raise self.fail(key, "expected a list of strings")
        return tuple(value)

    def table(self, key: str, required: bool = False) -> Table:
        self.seen.add(key)
        if key not in self.data:
            if required:
                raise self.fail(key, "missing")
            return Table({}, self.where, self.field(key))
        return Table(self.data[key], self.where, self.field(key))

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.seen)
        if unknown:
            raise self.fail(unknown[0], "unknown key")


def placeholders(t: Table, key: str, parts: Iterable[str], allowed_for: str) -> None:
    allowed = PLACEHOLDERS[allowed_for]
    for part in parts:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(part) if f is not None]
        except ValueError as exc:
            raise t.fail(key, f"bad template {part!r}: {exc}") from None
        for name in fields:
            if name not in allowed:
                hint = ", ".join(f"{{{a}}}" for a in sorted(allowed)) or "none"
                raise t.fail(key, f"unknown placeholder {{{name}}} (allowed: {hint})")


def command(t: Table, key: str, allowed_for: str, required: bool = False) -> Command | None:
    parts = t.strings(key, REQUIRED if required else None)
    if parts is None:
        return None
    if not parts:
        raise t.fail(key, "must not be empty")
    placeholders(t, key, parts, allowed_for)
    return Command(parts)


def regexes(t: Table, key: str, values: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    out = []
    for value in values:
        try:
            out.append(_compiled(value))
        except re.error as exc:
            raise t.fail(key, f"bad regex {value!r}: {exc}") from None
    return tuple(out)


@functools.cache
def _compiled(value: str) -> re.Pattern[str]:
    """Every provider inherits the common markers: ~600 distinct patterns are asked for
    ~3,700 times, more than re's own cache (512) keeps, and compiling is most of loading."""
    return re.compile(value, re.IGNORECASE)
