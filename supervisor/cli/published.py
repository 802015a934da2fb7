"""The running watcher's published view (api/view_file.py's `view.json`), read cheaply.

For commands that must start fast (`pitcrew tmux-status` runs every few seconds from tmux's
status line; `pitcrew status`): plain JSON, no `api` import. A file whose writer is no longer
running is no view at all (None).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

NAME = "view.json"      # api/view_file.NAME
VERSION = 1             # api/view_file.VERSION


def terminals(data_dir: Path) -> dict[str, dict[str, Any]] | None:
    """The published terminals by key ("<server>:<pane id>"), or None when no watcher
    publishes one (no file, another version, or its writer is gone)."""
    try:
        record = json.loads((data_dir / NAME).read_text(encoding="utf-8"))
        if not isinstance(record, dict) or record.get("version") != VERSION:
            return None
        if not _running(int(record["pid"])):
            return None
        rows = record["view"]["terminals"]
        return {str(t["key"]): t for t in rows if isinstance(t, dict) and "key" in t}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _running(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
