"""A provider's screen rules made ready to run: pattern sets built once per `ScreenRules`.

Building a `PatternSet` parses every regex for the literals it needs; that is done once per
rules object (cached by identity), not per screen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pitcrew.supervisor.core.patterns import MarkerScan, PatternSet
from pitcrew.supervisor.core.rules import ScreenRules
from pitcrew.supervisor.core.screen import MARKER_STATES, ScreenState

_CACHE_SIZE = 256
# Marker states in a fixed order, so a line's hits come out the same every time.
_ORDER = tuple(s for s in ScreenState if s in MARKER_STATES)


@dataclass(frozen=True, slots=True)
class CompiledRules:
    rules: ScreenRules
    chrome_lines: int
    markers: tuple[tuple[ScreenState, PatternSet], ...]
    scan: MarkerScan           # all of `markers` in one pass
    busy: PatternSet
    fallback: tuple[tuple[ScreenState, PatternSet], ...]
    causes: tuple[tuple[str, PatternSet], ...]
    input: tuple[re.Pattern[str], ...]
    input_frame: re.Pattern[str] | None
    placeholders: PatternSet
    transcript: PatternSet
    turn: PatternSet
    turn_end: PatternSet
    overlay: PatternSet
    banners: PatternSet        # background notices: never the turn's connection error or crash
    goodbye: PatternSet        # what the CLI prints on a normal exit (read once it is gone)
    input_last: bool


_CACHE: dict[int, CompiledRules] = {}


def compiled(rules: ScreenRules) -> CompiledRules:
    """The compiled form of `rules`, built on first use and kept (by identity)."""
    found = _CACHE.get(id(rules))
    if found is not None and found.rules is rules:
        return found
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    made = _compile(rules)
    _CACHE[id(rules)] = made
    return made


def _compile(rules: ScreenRules) -> CompiledRules:
    markers = tuple((s, PatternSet(rules.markers[s])) for s in _ORDER
                    if rules.markers.get(s))
    return CompiledRules(
        rules=rules,
        chrome_lines=rules.chrome_lines,
        markers=markers,
        scan=MarkerScan(markers),
        busy=PatternSet(rules.markers.get(ScreenState.BUSY, ())),
        fallback=tuple((s, PatternSet(rules.fallback[s])) for s in _ORDER
                       if rules.fallback.get(s)),
        causes=tuple((name, PatternSet(rxs)) for name, rxs in rules.causes.items()),
        input=rules.input,
        input_frame=rules.input_frame,
        placeholders=PatternSet(rules.placeholders),
        transcript=PatternSet(rules.transcript),
        turn=PatternSet(rules.turn),
        turn_end=PatternSet(rules.turn_end),
        overlay=PatternSet(rules.overlay),
        banners=PatternSet(rules.banners),
        goodbye=PatternSet(rules.goodbye),
        input_last=rules.input_last,
    )
