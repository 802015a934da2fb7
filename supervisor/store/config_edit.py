"""Changing one setting in the user's `config.toml` without touching anything else.

The file is the user's: comments, order and spacing stay as they are. Only the value of
`key` in `[section]` is replaced, or the key is added at the end of its section, or the
section is added at the end of the file. The write is atomic. A value is written on one line
(`checkers = ["claude", "codex"]`); an old value that spans lines (an array the user wrapped)
is replaced whole, its comments kept (a trailing one stays after the value, those inside it
go above it), so a setting written once can always be written again.

A file that does not parse is never written into: appending a line to a broken file would
bury the user's mistake under ours and could turn the setting on while every reader sees
the defaults. `set_value` refuses with `UneditableConfig` (the same one-line wording as the
loader) and leaves the file as it is; so does an edit whose result would not read back.
"""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
from pathlib import Path

import tomli_w

from pitcrew.supervisor.core.errors import ConfigError
from pitcrew.supervisor.store.config import DEFAULT_CONFIG_TEXT

_HEADER = re.compile(r"^\s*\[(\[)?([^\[\]]+)\]\]?\s*(#.*)?$")   # [table] or [[array]]


class UneditableConfig(ConfigError, ValueError):
    """config.toml does not parse (or the edit would not read back): nothing was written.
    A ValueError too, so callers that already treat a bad value as "not set" keep doing so."""


def set_value(path: Path, section: str, key: str, value: object) -> None:
    """Set `[section] key = value`; raises UneditableConfig and writes nothing when the file
    (or the edited text) is not TOML that holds the value."""
    text = _read(path)
    rendered = f"{key} = {render(value)}"       # one line, whatever the value
    lines = text.splitlines()
    spans = statements(lines)
    start = end = None
    for i, _ in spans:
        m = _HEADER.match(lines[i])
        if m and start is not None:
            end = i
            break
        if m and not m.group(1) and m.group(2).strip() == section:
            start = i
    if start is None:
        lines += ["", f"[{section}]", rendered]
    else:
        end = len(lines) if end is None else end
        key_rx = re.compile(rf"^(\s*){re.escape(key)}\s*=")
        for i, j in spans:
            if not start < i < end:
                continue
            m = key_rx.match(lines[i])
            if m:      # the old value may span lines (a multi-line array): all of it goes
                notes = _comments(lines[i:j + 1])
                trailing = ""
                if notes and notes[-1][0] == j - i:          # the last line's: stays put
                    tail, col = lines[j], notes.pop()[1]
                    trailing = tail[len(tail[:col].rstrip()):]
                lines[i:j + 1] = [*(f"{m.group(1)}{lines[i + n][at:].rstrip()}"
                                    for n, at in notes), f"{m.group(1)}{rendered}{trailing}"]
                break
        else:
            last = max((j for i, j in spans if start <= i < end and lines[i].strip()),
                       default=start)
            lines.insert(last + 1, rendered)
    edited = "\n".join(lines) + "\n"
    try:
        table = tomllib.loads(edited).get(section)
    except tomllib.TOMLDecodeError:
        table = None
    if not isinstance(table, dict) or table.get(key) != value:
        raise UneditableConfig(path.name, f"cannot set {section}.{key} here without breaking "
                               f"the file ([{section}] is not a plain table); fix it by hand")
    _write(path, edited)


def render(value: object) -> str:
    """A TOML value on one line (tomli_w writes arrays over several lines)."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render(v) for v in value) + "]"
    return tomli_w.dumps({"v": value}).strip()[len("v = "):]


def statements(lines: list[str]) -> list[tuple[int, int]]:
    """The file's statements as (first line, last line): a value that spans lines (a
    multi-line array or string) is one statement, so a line inside it is never taken for a
    header or a key. The file parses (`_read` checked), so every statement ends."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        j = i
        if "=" in lines[i] and not _HEADER.match(lines[i]):
            while j + 1 < len(lines) and not _complete(lines[i:j + 1]):
                j += 1
        out.append((i, j))
        i = j + 1
    return out


def _complete(lines: list[str]) -> bool:
    try:
        tomllib.loads("\n".join(lines))
    except tomllib.TOMLDecodeError:
        return False
    return True


def _comments(lines: list[str]) -> list[tuple[int, int]]:
    """Where the comments in and after an old value start, as (line, column), in order: `#`
    outside strings (a small scan of TOML's four string forms, across the value's lines).
    The value is replaced; the user's notes are kept (those inside it go above it)."""
    found: list[tuple[int, int]] = []
    quote = ""
    for n, line in enumerate(lines):
        k = 0
        while k < len(line):
            if quote:
                if quote in ('"', '"""') and line[k] == "\\":
                    k += 2
                    continue
                if line.startswith(quote, k):
                    k, quote = k + len(quote), ""
                    continue
                k += 1
                continue
            if line[k] == "#":
                found.append((n, k))
                break
            for q in ('"""', "'''", '"', "'"):
                if line.startswith(q, k):
                    quote = q
                    k += len(q) - 1
                    break
            k += 1
        if quote in ('"', "'"):
            quote = ""         # a basic string ends with its line
    return found


def _read(path: Path) -> str:
    if not path.exists():
        return DEFAULT_CONFIG_TEXT
    try:
        text = path.read_text(encoding="utf-8")
        tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise UneditableConfig(path.name, f"cannot read it ({exc}); nothing changed") from None
    except tomllib.TOMLDecodeError as exc:
        raise UneditableConfig(path.name, f"not valid TOML ({exc}); fix it first, nothing "
                               "changed") from None
    return text


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
