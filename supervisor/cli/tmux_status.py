"""`pitcrew tmux-status`: a short segment for tmux's `status-right`.

`⚑2 ⟳3`: two agents need you, three are working (a count of zero is left out). Read from the
view `pitcrew watch` (or the tray app) publishes, never by scanning: it runs every few
seconds. No watcher running: no output. Imports next to nothing (tests/cli/test_cold_start).
"""

from __future__ import annotations

import argparse

from pitcrew.supervisor.cli.published import terminals
from pitcrew.supervisor.store.paths import resolve

MARKS = (("needs_you", "⚑"), ("working", "⟳"))


def segment(rows: list[dict[str, object]]) -> str:
    counts = {name: sum(1 for t in rows if t.get("attention") == name) for name, _ in MARKS}
    return " ".join(f"{mark}{counts[name]}" for name, mark in MARKS if counts[name])


def tmux_status(args: argparse.Namespace) -> int:
    published = terminals(resolve().data_dir)
    text = segment(list(published.values())) if published else ""
    if text:
        print(text)
    return 0
