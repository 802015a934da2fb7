"""A provider file's `[screen]` table: checked when the file loads, compiled when first read.

The screen patterns are most of a provider file: ~600 distinct regexes (a third of them the
common markers every provider inherits), and compiling them took about a fifth of
`pitcrew status` — for providers whose agent was not even running. So loading a provider only
*checks* its screen table: every key and type, every marker state, and that every pattern
compiles, failing with the one `ConfigError` line as before. The `ScreenRules` themselves are
built on first read (`DeferredScreen`), by the same function over the same table, which cannot
fail once the check passed.

Checking a pattern means compiling it, unless `KnownPatterns` says it compiled on an earlier
run: a small JSON file in the cache folder listing the patterns the last load checked, valid
for one Python build (its `re`) and one `FORMAT`. A missing, unreadable or stale file only
means checking everything again; a pattern that fails to compile is never written to it.
Input patterns are always compiled at load, since their `(?P<text>…)` group is checked too.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pitcrew.supervisor.core.rules import ScreenRules
from pitcrew.supervisor.core.screen import MARKER_STATES, ScreenState
from pitcrew.supervisor.providers.model import DeferredScreen
from pitcrew.supervisor.providers.table import Table, regexes

FORMAT = 1   # bump when what a check accepts changes (flags, the checks below)

Patterns = tuple[re.Pattern[str], ...]
Compile = Callable[[Table, str, Iterable[str]], Patterns]


class KnownPatterns:
    """The patterns known to compile: read once from `path`, saved after a load."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.before = self._read()
        self.checked: set[str] = set()

    def _stamp(self) -> dict[str, Any]:
        return {"format": FORMAT, "python": sys.version}

    def _read(self) -> frozenset[str]:
        if self.path is None:
            return frozenset()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("stamp") != self._stamp():
                return frozenset()
            return frozenset(p for p in data["patterns"] if isinstance(p, str))
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return frozenset()

    def check(self, t: Table, key: str, values: Iterable[str]) -> Patterns:
        """Raise `ConfigError` naming `t`'s file and field for a pattern that does not compile;
        return nothing (a check builds no rules)."""
        for value in values:
            if value not in self.before:
                regexes(t, key, (value,))
            self.checked.add(value)
        return ()

    def save(self) -> None:
        """Write what this load checked, if it differs from what was read (best effort: a
        read-only cache folder only costs the next run its checks)."""
        if self.path is None or self.checked == self.before:
            return
        text = json.dumps({"stamp": self._stamp(), "patterns": sorted(self.checked)})
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.path)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def deferred_screen(
    t: Table, common: Mapping[str, Any], where: str, known: KnownPatterns
) -> DeferredScreen:
    """Check `[screen]` now (raising `ConfigError`), and build its rules when first read."""
    rules(t, common, where, known.check)
    data, path = t.data, t.path
    return DeferredScreen(lambda: rules(Table(data, where, path), common, where, regexes))


def rules(t: Table, common: Mapping[str, Any], where: str, rx: Compile = regexes) -> ScreenRules:
    """The screen rules of table `t` over the `common` screen table, with each pattern list
    passed through `rx`: `regexes` compiles them, `KnownPatterns.check` only checks them."""
    inherit = t.flag("inherit_common", True)
    chrome = t.integer("chrome_lines", 15)
    if not 3 <= chrome <= 200:
        raise t.fail("chrome_lines", "expected 3..200")
    markers = _markers(t.table("markers"), rx)
    fallback = _markers(t.table("fallback"), rx)
    c = t.table("causes")
    causes = {key: rx(c, key, c.strings(key)) for key in c.data}
    screen = ScreenRules(
        chrome_lines=chrome,
        markers=markers,
        causes=causes,
        input=regexes(t, "input", t.strings("input")),
        placeholders=rx(t, "placeholders", t.strings("placeholders")),
        transcript=rx(t, "transcript", t.strings("transcript")),
        turn=rx(t, "turn", t.strings("turn")),
        turn_end=rx(t, "turn_end", t.strings("turn_end")),
        input_last=t.flag("input_last", False),
        overlay=rx(t, "overlay", t.strings("overlay")),
        input_frame=next(iter(rx(t, "input_frame", [t.text("input_frame")]
                                  if t.text("input_frame") else [])), None),
        continue_message=t.text("continue_message"),
        fallback=fallback,
        banners=rx(t, "banners", t.strings("banners")),
        progress_ignore=rx(t, "progress_ignore", t.strings("progress_ignore")),
        goodbye=rx(t, "goodbye", t.strings("goodbye")),
    )
    for pattern in screen.input:
        if "text" not in pattern.groupindex:
            raise t.fail("input", f"pattern {pattern.pattern!r} needs a (?P<text>…) group")
    t.done()
    if inherit and common:
        base = rules(Table(common, where, "common.screen"), {}, where, rx)
        screen = ScreenRules(
            chrome_lines=screen.chrome_lines,
            markers={s: screen.markers.get(s, ()) + base.markers.get(s, ())
                     for s in screen.markers.keys() | base.markers.keys()},
            causes={c: screen.causes.get(c, ()) + base.causes.get(c, ())
                    for c in screen.causes.keys() | base.causes.keys()},
            input=screen.input or base.input,
            input_frame=screen.input_frame or base.input_frame,
            placeholders=screen.placeholders + base.placeholders,
            transcript=screen.transcript + base.transcript,
            turn=screen.turn or base.turn,
            turn_end=screen.turn_end or base.turn_end,
            input_last=screen.input_last,
            overlay=screen.overlay + base.overlay,
            continue_message=screen.continue_message,
            fallback={s: screen.fallback.get(s, ()) + base.fallback.get(s, ())
                      for s in screen.fallback.keys() | base.fallback.keys()},
            banners=screen.banners + base.banners,
            progress_ignore=screen.progress_ignore + base.progress_ignore,
            goodbye=screen.goodbye + base.goodbye,
        )
    return screen


def _markers(m: Table, rx: Compile) -> dict[ScreenState, Patterns]:
    """A table of state -> list of regexes (`markers`, `fallback`)."""
    out: dict[ScreenState, Patterns] = {}
    for key in m.data:
        try:
            state = ScreenState(key)
        except ValueError:
            state = None
        if state not in MARKER_STATES:
            raise m.fail(key, f"not a marker state (one of {', '.join(sorted(MARKER_STATES))})")
        out[state] = rx(m, key, m.strings(key))
    return out
