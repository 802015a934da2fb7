"""Sets of case-insensitive regexes that skip, without running them, patterns a line cannot match.

A provider's screen rules are some 150 regexes; running each over each chrome line costs about
2,000 searches per screen. Most patterns contain literal text that any match must contain
("usage limit", "429", "esc to"), so each pattern is stored with the literals it cannot match
without (found once by parsing the regex) and is only run on a line whose casefolded text
contains one of them. The answer is the same as running every pattern; only faster.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

try:  # CPython's own regex parser; without it every pattern simply always runs
    from re import _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    _sre = None

MIN_KEY = 2          # shorter literals filter too little to be worth a check
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
Keys = tuple[str, ...] | None


def _char(code: int) -> str | None:
    """A literal character as it can be compared casefolded, or None when case folding could
    make `in` disagree with the regex (non-ASCII letters that have case)."""
    ch = chr(code)
    if ch.isascii() or (ch.casefold() == ch and ch.upper() == ch):
        return ch.casefold()
    return None


def _score(keys: tuple[str, ...]) -> int:
    return min(len(k) for k in keys)


def _required(items: Any) -> Keys:
    """Literals one of which every match of this parsed sequence contains (None: unknown)."""
    best: tuple[str, ...] | None = None
    run = ""

    def offer(keys: Keys) -> None:
        nonlocal best
        if keys and _score(keys) >= MIN_KEY and (best is None or _score(keys) > _score(best)):
            best = keys

    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            ch = _char(av)
            if ch is not None:
                run += ch
                continue
        offer((run,) if run else None)
        run = ""
        if name == "SUBPATTERN":
            offer(_required(av[-1]))
        elif name == "BRANCH":
            alternatives = [_required(branch) for branch in av[1]]
            if all(alternatives):
                offer(tuple(k for keys in alternatives if keys for k in keys))
        elif name in _REPEATS and av[0] >= 1:
            offer(_required(av[2]))
    offer((run,) if run else None)
    return best


def required_literals(pattern: str, flags: int = re.IGNORECASE) -> Keys:
    """Casefolded strings, one of which occurs in any text `pattern` matches; None when the
    pattern has no such literal (then it must always run)."""
    if _sre is None:
        return None
    try:
        parsed = _sre.parse(pattern, flags)
    except Exception:  # pragma: no cover - compiled before, so it parses
        return None
    keys = _required(parsed)
    return tuple(sorted(set(keys))) if keys else None


class PatternSet:
    """Case-insensitive regexes searched as one: `search(line, folded)` returns a match of one
    of them (the first that matches, those without literals first) or None.

    `folded` is `line.casefold()`, computed once per line by the caller.
    """

    __slots__ = ("_always", "_keyed", "patterns")

    def __init__(self, patterns: Iterable[re.Pattern[str]]) -> None:
        self.patterns: tuple[re.Pattern[str], ...] = tuple(patterns)
        always = []
        keyed = []
        for rx in self.patterns:
            keys = required_literals(rx.pattern, rx.flags) if rx.flags & re.IGNORECASE else None
            if keys is None:
                always.append(rx)
                continue
            keyed.append((rx, keys[0] if len(keys) == 1 else None,
                          keys if len(keys) > 1 else None))
        self._always: Sequence[re.Pattern[str]] = tuple(always)
        self._keyed: Sequence[tuple[re.Pattern[str], str | None, tuple[str, ...] | None]] = (
            tuple(keyed))

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def search(self, line: str, folded: str) -> re.Match[str] | None:
        for rx in self._always:
            m = rx.search(line)
            if m is not None:
                return m
        for rx, key, keys in self._keyed:
            if key is not None:
                if key not in folded:
                    continue
            elif keys is not None:
                for k in keys:
                    if k in folded:
                        break
                else:
                    continue
            m = rx.search(line)
            if m is not None:
                return m
        return None


def _trie(words: Iterable[str]) -> str:
    """A regex matching any of `words` (the longest at a position), built as a trie so the
    engine branches once per character instead of trying every word."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alternatives = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not alternatives:
            return ""
        body = "|".join(alternatives)
        if "" in node:
            return f"(?:{body})?"
        return alternatives[0] if len(alternatives) == 1 else f"(?:{body})"

    return emit(root)


class MarkerScan:
    """Every state's patterns, to find all the states a line shows in one call (`states`).
    `skip` names states not to look for on this line (e.g. error states on the agent's prose).

    One search of a trie of every pattern's literals lists the literals a line contains; only
    the patterns needing one of those run (plus the few patterns with no literal).
    """

    __slots__ = ("_always", "_by_key", "_finder", "_prefixes", "_states")

    def __init__(self, sets: Iterable[tuple[Any, PatternSet]]) -> None:
        always: list[tuple[Any, re.Pattern[str]]] = []
        by_key: dict[str, list[tuple[Any, re.Pattern[str]]]] = {}
        states: list[Any] = []
        for state, ps in sets:
            states.append(state)
            always.extend((state, rx) for rx in ps._always)
            for rx, key, keys in ps._keyed:
                for k in (key,) if key is not None else keys or ():
                    by_key.setdefault(k, []).append((state, rx))
        self._states = tuple(states)
        self._always = tuple(always)
        self._by_key = by_key
        words = sorted(by_key)
        # every literal that is a prefix of another: found at the same position, unreported
        self._prefixes = {w: tuple(k for k in words if w.startswith(k)) for w in words}
        self._finder = re.compile(f"(?=({_trie(words)}))") if words else None

    def states(self, line: str, folded: str, skip: frozenset[Any] = frozenset()
               ) -> list[tuple[Any, re.Match[str]]]:
        found: dict[Any, re.Match[str]] = {}
        for state, rx in self._always:
            if state not in found and state not in skip:
                m = rx.search(line)
                if m is not None:
                    found[state] = m
        if self._finder is not None:
            seen: set[str] = set()
            for longest in self._finder.findall(folded):
                for key in self._prefixes[longest]:
                    if key in seen:
                        continue
                    seen.add(key)
                    for state, rx in self._by_key[key]:
                        if state in found or state in skip:
                            continue
                        m = rx.search(line)
                        if m is not None:
                            found[state] = m
        return [(state, found[state]) for state in self._states if state in found]
