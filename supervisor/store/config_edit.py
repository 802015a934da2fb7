"""Changing one setting in the user's `config.toml` without touching anything else.

The file is the user's: comments, order and spacing stay as they are. Only the value of
`key` in `[section]` is replaced (keeping a trailing comment), or the key is added at the end
of its section, or the section is added at the end of the file. The write is atomic.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import tomli_w

from pitcrew.supervisor.store.config import DEFAULT_CONFIG_TEXT

_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")


def set_value(path: Path, section: str, key: str, value: object) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else DEFAULT_CONFIG_TEXT
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
    _write(path, "\n".join(lines) + "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
