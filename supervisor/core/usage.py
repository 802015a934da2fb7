"""Token usage and cost as an agent CLI records them in its own session file.

Where the numbers sit is data (a provider file's `[usage]` table → `UsageFields`), so a new
CLI needs no code: which records carry usage (`match`), where the usage object is (`at`),
which of its fields are input, output and cached tokens, and how the CLI counts:

* per record — each record is one model call. Claude Code writes one record per content
  block and repeats the message's usage on each, so `key` (`message.id`) counts a message
  once (the last record with that key wins: its usage is the final one).
* cumulative — each record holds the session's running total (Codex's `token_count`
  events); steps are the differences, and a total that drops (a new session in the same
  file) starts over.

A sudden spike — a 10-minute window using many times more tokens than the windows before it
— is an anomaly in the report. Pure: records in, numbers out; nothing read here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class UsageFields:
    """A provider's declaration of where its session file records token usage."""

    at: str                                   # dotted path to the usage object in a record
    input: tuple[str, ...]                    # its fields counted as input tokens (summed)
    output: tuple[str, ...]                   # … as output tokens
    cached: tuple[str, ...] = ()              # … as cached input (a part of input)
    match: tuple[tuple[str, str], ...] = ()   # (dotted path, value): all must be equal
    key: str | None = None                    # one count per value of this path
    cumulative: bool = False                  # records hold running totals
    time: str = "timestamp"                   # dotted path to the record's time
    cost: str | None = None                   # dotted path to a cost in dollars, if recorded
    expand: tuple[str, ...] = ()              # paths to lists of records inside a record


@dataclass(frozen=True, slots=True)
class UsageStep:
    """One model call (or one step of a running total)."""

    at: float | None
    input: int
    output: int
    cached: int = 0
    cost: float | None = None

    @property
    def tokens(self) -> int:
        return self.input + self.output


@dataclass(frozen=True, slots=True)
class TokenTotals:
    input: int = 0
    output: int = 0
    cached: int = 0
    cost: float | None = None     # None: the CLI records no cost
    calls: int = 0

    @property
    def tokens(self) -> int:
        return self.input + self.output

    def to_json(self) -> dict[str, object]:
        return {"input": self.input, "output": self.output, "cached": self.cached,
                "total": self.tokens, "cost_usd": self.cost, "calls": self.calls}


@dataclass(frozen=True, slots=True)
class SpikeRule:
    window: float = 600.0         # tokens are summed per 10 minutes
    factor: float = 5.0           # a window using 5× the median of the windows before it …
    floor: int = 100_000          # … and at least this many tokens is a spike
    history: int = 6              # how many earlier busy windows make the median
    min_history: int = 3          # fewer than this: too little to call anything a spike


SPIKES = SpikeRule()


@dataclass(frozen=True, slots=True)
class Spike:
    at: float                     # the window's start
    tokens: int
    baseline: float               # the median of the windows before it


def dig(obj: object, dotted: str) -> object:
    for part in dotted.split(".") if dotted else ():
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def _count(usage: Mapping[str, object], names: Iterable[str]) -> int:
    total = 0
    for name in names:
        value = usage.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            total += int(value)
    return total


def _time(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) / 1000.0 if value > 1e12 else float(value)
    if isinstance(value, str) and value:
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        return parsed.timestamp()
    return None


def _flatten(records: Iterable[Mapping[str, object]], paths: Sequence[str]
             ) -> Iterator[Mapping[str, object]]:
    for rec in records:
        yield rec
        for path in paths:
            inner = dig(rec, path)
            if isinstance(inner, list):
                yield from (r for r in inner if isinstance(r, Mapping))


def extract(records: Iterable[Mapping[str, object]], fields: UsageFields) -> list[UsageStep]:
    """The usage steps in `records` (a session file's JSON objects, in file order)."""
    keyed: dict[str, UsageStep] = {}
    steps: list[UsageStep | str] = []      # a str stands for the keyed step of that key
    for rec in _flatten(records, fields.expand):
        if any(str(dig(rec, path)) != value for path, value in fields.match):
            continue
        usage = dig(rec, fields.at)
        if not isinstance(usage, Mapping):
            continue
        raw_cost = dig(rec, fields.cost) if fields.cost else None
        cost = (float(raw_cost) if isinstance(raw_cost, (int, float))
                and not isinstance(raw_cost, bool) else None)
        step = UsageStep(_time(dig(rec, fields.time)), _count(usage, fields.input),
                         _count(usage, fields.output), _count(usage, fields.cached), cost)
        key = dig(rec, fields.key) if fields.key else None
        if isinstance(key, str) and key:
            if key not in keyed:
                steps.append(key)
            first = keyed.get(key)
            keyed[key] = step if first is None or step.at is not None else \
                UsageStep(first.at, step.input, step.output, step.cached, step.cost)
        else:
            steps.append(step)
    out = [keyed[s] if isinstance(s, str) else s for s in steps]
    return _differences(out) if fields.cumulative else out


def _differences(totals: Sequence[UsageStep]) -> list[UsageStep]:
    out: list[UsageStep] = []
    prev = UsageStep(None, 0, 0, 0, None)
    for t in totals:
        if t.tokens < prev.tokens:              # the running total started over
            prev = UsageStep(None, 0, 0, 0, None)
        if t.tokens == prev.tokens:             # a repeated total is no new call
            continue
        cost = (t.cost - (prev.cost or 0.0)) if t.cost is not None else None
        out.append(UsageStep(t.at, max(t.input - prev.input, 0), max(t.output - prev.output, 0),
                             max(t.cached - prev.cached, 0), cost))
        prev = t
    return out


def totals(steps: Iterable[UsageStep]) -> TokenTotals:
    inp = out = cached = calls = 0
    cost: float | None = None
    for s in steps:
        inp, out, cached, calls = inp + s.input, out + s.output, cached + s.cached, calls + 1
        if s.cost is not None:
            cost = (cost or 0.0) + s.cost
    return TokenTotals(inp, out, cached, round(cost, 6) if cost is not None else None, calls)


def windows(steps: Iterable[UsageStep], size: float = SPIKES.window) -> list[tuple[float, int]]:
    """Tokens per `size`-second window (start, tokens), oldest first; steps without a time
    are left out."""
    sums: dict[float, int] = {}
    for s in steps:
        if s.at is not None:
            start = s.at - s.at % size
            sums[start] = sums.get(start, 0) + s.tokens
    return sorted(sums.items())


def spikes(steps: Iterable[UsageStep], rule: SpikeRule = SPIKES) -> list[Spike]:
    """Windows that used `rule.factor` times the median of the busy windows before them."""
    found: list[Spike] = []
    seen: list[int] = []
    for start, tokens in windows(steps, rule.window):
        recent = seen[-rule.history:]
        if len(recent) >= rule.min_history:
            base = _median(recent)
            if tokens >= rule.floor and tokens > rule.factor * base:
                found.append(Spike(start, tokens, base))
        seen.append(tokens)
    return found


def _median(values: Sequence[int]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return float(ordered[mid]) if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
