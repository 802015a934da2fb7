"""Changing one setting in the user's `config.toml` without touching anything else.

The file is the user's: comments, order and spacing stay as they are. Only the value of
`key` in `[section]` is replaced (keeping a trailing comment), or the key is added at the end
of its section, or the section is added at the end of the file. The write is atomic.

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

_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")


class UneditableConfig(ConfigError, ValueError):
    """config.toml does not parse (or the edit would not read back): nothing was written.
    A ValueError too, so callers that already treat a bad value as "not set" keep doing so."""


def set_value(path: Path, section: str, key: str, value: object) -> None:
    """Set `[section] key = value`; raises UneditableConfig and writes nothing when the file
    (or the edited text) is not TOML that holds the value."""
    text = _read(path)
    rendered = tomli_w.dumps({key: value}).strip()          # `key = value`
    lines = text.splitlines()
    start = end = None
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m and start is not None:
            end = i
            break
        if m and m.group(1).strip() == section:
            start = i
    if start is None:
        lines += ["", f"[{section}]", rendered]
    else:
        end = len(lines) if end is None else end
        key_rx = re.compile(rf"^(\s*){re.escape(key)}\s*=\s*(.*?)(\s+#.*)?$")
        for i in range(start + 1, end):
            m = key_rx.match(lines[i])
            if m:
                lines[i] = f"{m.group(1)}{rendered}{m.group(3) or ''}"
                break
        else:
            last = max((i for i in range(start, end) if lines[i].strip()), default=start)
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
