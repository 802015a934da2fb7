"""Anomalies in a terminal's history, each with a severity, for the incident report.

Two tables make the rules: `SEVERITY` (what each kind of anomaly weighs) and `ROW_RULES`
(which words in a row's trigger, reason or readings mark one: the core writes "3 crashes
within 120s" when it cools a crash loop down, "did not start" when a resume did not take).
Rows of a kind added later (task timeouts, stuck loops) are caught by their words, so a new
kind is one line. Repeated usage limits need more than one row, token spikes come from the
session file; both are below. Repeats of one kind close together are one anomaly with a count. Pure.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pitcrew.supervisor.core.report_rows import Row, text
from pitcrew.supervisor.core.usage import Spike


class Severity(enum.StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"


SEVERITY: Mapping[str, Severity] = {
    "crash_loop": Severity.CRITICAL,
    "loop": Severity.CRITICAL,
    "resume_not_started": Severity.CRITICAL,
    "repeated_limit": Severity.WARNING,
    "timeout": Severity.WARNING,
    "stopped": Severity.WARNING,
    "couldnt_resume": Severity.WARNING,
    "token_spike": Severity.WARNING,
    "diagnosis_failed": Severity.INFO,
}
# (kind, what it means to a person, pattern searched in trigger, reason, badge and readings'
# "state"/"screen"); the first rule that matches a row wins.
ROW_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("crash_loop", "crash loop", re.compile(r"\bcrashes within\b|crash loop", re.I)),
    ("resume_not_started", "a resume did not start",
     re.compile(r"did not start|didn't start|never started", re.I)),
    ("loop", "stuck in a loop", re.compile(r"\bloop(ing)?\b|repeat(ed|ing) the same", re.I)),
    ("timeout", "task timeout",
     re.compile(r"time-?out|timed out|running for \d+|not started within", re.I)),
    ("stopped", "Autopilot stopped retrying", re.compile(r"^Stopped retrying$")),
    ("couldnt_resume", "could not resume", re.compile(r"^Couldn't resume$")),
)
MERGE = 600.0                    # the same kind again within 10 min is the same anomaly
LIMITS_REPEATED = 2              # a second distinct usage limit in the report's window
LIMIT_SAME = 1800.0              # readings of a limit without its reset time this close: one


@dataclass(frozen=True, slots=True)
class Anomaly:
    severity: Severity
    kind: str
    terminal: str
    at: float
    text: str
    count: int = 1

    def to_json(self) -> dict[str, object]:
        return {"severity": self.severity.value, "kind": self.kind, "terminal": self.terminal,
                "at": self.at, "text": self.text, "count": self.count}


def rank(severity: Severity) -> int:
    return list(Severity).index(severity)


def severity_of(kind: str) -> Severity:
    return SEVERITY.get(kind, Severity.INFO)


def _row_kind(r: Row) -> tuple[str, str] | None:
    said = [r.trigger, r.reason, text(r.readings.get("state")), text(r.readings.get("screen"))]
    for kind, meaning, pattern in ROW_RULES:
        if pattern.search(r.badge) or any(pattern.search(s) for s in said if s):
            return kind, meaning
    if r.badge == "Diagnosed" and text(r.readings.get("checker")).startswith("local classifier ("):
        return "diagnosis_failed", "no checker answered"
    return None


def detect(terminal: str, rows: Sequence[Row], token_spikes: Sequence[Spike] = ()
           ) -> list[Anomaly]:
    """The anomalies of one terminal (`rows` oldest first)."""
    found: list[Anomaly] = []
    for r in rows:
        hit = _row_kind(r)
        if hit is not None:
            kind, meaning = hit
            found.append(Anomaly(severity_of(kind), kind, terminal, r.at,
                                 f"{meaning}: {r.reason or r.trigger}"))
    limits = _limits(rows)
    if len(limits) >= LIMITS_REPEATED:
        found.append(Anomaly(severity_of("repeated_limit"), "repeated_limit", terminal,
                             limits[-1], f"usage limit hit {len(limits)} times"))
    for s in token_spikes:
        found.append(Anomaly(severity_of("token_spike"), "token_spike", terminal, s.at,
                             f"token spike: {s.tokens:,} tokens in 10 min "
                             f"(usually {s.baseline:,.0f})"))
    return _merged(found)


def _limits(rows: Sequence[Row]) -> list[float]:
    """When each distinct usage limit was first seen. One limit is one reset time; a reading
    without one (a diagnosis) is the same limit as another reading within `LIMIT_SAME`."""
    times: list[float] = []
    resets: list[str] = []
    for r in rows:
        g = r.readings
        if "rate_limit" not in (g.get("screen"), g.get("state")):
            continue
        reset = text(g.get("reset_at"))
        if reset and reset in resets:
            continue
        near = [i for i, at in enumerate(times)
                if r.at - at <= LIMIT_SAME and not (resets[i] and reset)]
        if near:
            resets[near[-1]] = resets[near[-1]] or reset
            continue
        times.append(r.at)
        resets.append(reset)
    return times


def _merged(found: Sequence[Anomaly]) -> list[Anomaly]:
    out: list[Anomaly] = []
    last: dict[str, int] = {}
    for a in sorted(found, key=lambda a: a.at):
        i = last.get(a.kind)
        if i is not None and a.at - out[i].at <= MERGE:
            prev = out[i]
            out[i] = Anomaly(prev.severity, prev.kind, prev.terminal, a.at, prev.text,
                             prev.count + a.count)
            continue
        last[a.kind] = len(out)
        out.append(a)
    return out
