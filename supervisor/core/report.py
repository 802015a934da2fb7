"""The incident report as data: ledger rows (and what state.json and session files add) in,
one typed `Report` out — per terminal a state timeline, its incidents with every decision and
reading behind them, the checkers' answers with their timings, restarts per hour, tokens, and
the anomalies (`core.anomalies`).

Rows are taken as the raw JSON objects of the ledger, read leniently: a row needs only a time
and a terminal; a kind or badge this version does not know (a newer Pitcrew wrote it) is kept
and shown as it is, it just does not move the timeline. Incidents are grouped by the
`incident` number a row carries; rows written before rows carried one are grouped by prompt
and time. Pure: no clock (`now` is passed in), no files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pitcrew.supervisor.core import anomalies
from pitcrew.supervisor.core.anomalies import Anomaly
from pitcrew.supervisor.core.report_rows import Row, text
from pitcrew.supervisor.core.usage import Spike, TokenTotals, UsageStep, spikes, totals, windows

HOUR = 3600.0
MAX_HOURS = 168     # the restart chart shows at most the last week
GAP = HOUR          # rows of one prompt further apart than this are separate incidents
DIAGNOSIS_BADGE = "Diagnosed"
RESTART_BADGES = frozenset({"Resumed", "Continued", "Switched to backup"})
# What a row's badge says the terminal is doing from then on (the timeline). A badge not in
# the table leaves the state as it was; adding a badge is one line here.
BADGE_STATE: Mapping[str, str] = {
    "Resumed": "working", "Continued": "working", "Switched to backup": "working",
    "Typed": "working", "Skipped": "working",
    "Scheduled": "scheduled",
    "Waiting on you": "waiting", "Couldn't resume": "stopped", "Stopped retrying": "stopped",
    "Held": "waiting", "Rerun": "working",
}
STATES = ("working", "scheduled", "diagnosing", "waiting", "stopped")
NOT_INCIDENTS = frozenset({"Typed"})   # a queued message typed: a delivery, not a failure


@dataclass(frozen=True, slots=True)
class CheckerAnswer:
    checker: str
    model: str | None
    outcome: str
    seconds: float
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Diagnosis:
    at: float
    by: str
    state: str
    seconds: float
    evidence: str
    answers: tuple[CheckerAnswer, ...]


@dataclass(frozen=True, slots=True)
class Incident:
    terminal: str
    number: int | None          # None: grouped from rows that carried no number
    opened_at: float
    last_at: float
    trigger: str
    prompt: str
    outcome: str                # the badge of its last row
    rows: tuple[Row, ...]
    diagnoses: tuple[Diagnosis, ...]


@dataclass(frozen=True, slots=True)
class Segment:
    start: float
    end: float
    state: str


@dataclass(frozen=True, slots=True)
class TerminalInfo:
    """What state.json knows about a terminal (the rows may name terminals it does not)."""

    terminal: str
    agent: str = ""
    project: str = ""
    session_id: str | None = None
    health: str = ""
    started: float | None = None    # the agent process's start (state.json's agent_started)


@dataclass(frozen=True, slots=True)
class TerminalReport:
    terminal: str
    agent: str
    project: str
    session_id: str | None
    health: str
    segments: tuple[Segment, ...]
    marks: tuple[Row, ...]                           # every row, for the timeline's ticks
    incidents: tuple[Incident, ...]
    restarts_per_hour: tuple[tuple[float, int], ...]  # (hour start, count), every hour
    tokens: TokenTotals | None                        # None: the CLI records none we read
    token_windows: tuple[tuple[float, int], ...] = ()
    spikes: tuple[Spike, ...] = ()


@dataclass(frozen=True, slots=True)
class Query:
    since: float
    until: float
    terminal: str | None = None     # a terminal name, pane id or state key
    incident: int | None = None


@dataclass(frozen=True, slots=True)
class Report:
    generated_at: float
    since: float
    until: float
    title: str
    terminals: tuple[TerminalReport, ...]
    anomalies: tuple[Anomaly, ...]
    skipped_rows: int = 0


def matches(terminal: str, wanted: str, aliases: Sequence[str] = ()) -> bool:
    """`wanted` names this terminal: its name (`work:%3`), its pane id (`%3`) or an alias
    (the state key `server:%3`)."""
    return wanted in (terminal, terminal.rpartition(":")[2], *aliases)


def build(rows: Sequence[Row], q: Query, info: Mapping[str, TerminalInfo] | None = None,
          usage: Mapping[str, Sequence[UsageStep]] | None = None, skipped: int = 0,
          aliases: Mapping[str, Sequence[str]] | None = None) -> Report:
    """The report for the rows in [q.since, q.until]; `info`, `usage`, `aliases` by terminal."""
    info, usage, aliases = info or {}, usage or {}, aliases or {}
    names = sorted({r.terminal for r in rows} | set(info) | set(usage))
    if q.terminal:
        names = [n for n in names if matches(n, q.terminal, aliases.get(n, ()))]
    q = _trimmed(q, [r.at for r in rows if r.terminal in names]
                 + [s.at for n in names for s in usage.get(n, ()) if s.at is not None])
    out: list[TerminalReport] = []
    found: list[Anomaly] = []
    for name in names:
        mine = sorted((r for r in rows if r.terminal == name and q.since <= r.at <= q.until),
                      key=lambda r: r.at)
        incidents = group(mine)
        if q.incident is not None:
            incidents = [i for i in incidents if i.number == q.incident]
            if not incidents:
                continue
            mine = [r for i in incidents for r in i.rows]
        steps = [s for s in usage.get(name, ()) if s.at is None or q.since <= s.at <= q.until]
        t = info.get(name, TerminalInfo(name))
        last = mine[-1] if mine else None
        report = TerminalReport(
            terminal=name, agent=t.agent or (last.agent if last else ""),
            project=t.project or (last.project if last else ""), session_id=t.session_id,
            health=t.health, segments=timeline(mine, q.since, q.until, _seen(t, steps)),
            marks=tuple(mine),
            incidents=tuple(incidents), restarts_per_hour=per_hour(mine, q.since, q.until),
            tokens=totals(steps) if steps else None,
            token_windows=tuple(windows(steps)), spikes=tuple(spikes(steps)))
        out.append(report)
        found.extend(anomalies.detect(name, mine, report.spikes))
    title = (f"incident {q.incident}" if q.incident is not None else "") + (
        f" on {q.terminal}" if q.terminal else "")
    return Report(q.until, q.since, q.until, title.strip() or "all terminals", tuple(out),
                  tuple(sorted(found, key=lambda a: (anomalies.rank(a.severity), -a.at))),
                  skipped)


def _seen(t: TerminalInfo, steps: Sequence[UsageStep]) -> float | None:
    """The earliest time the terminal's agent is known to exist, besides its rows."""
    known = [s.at for s in steps if s.at is not None]
    if t.started is not None:
        known.append(t.started)
    return min(known, default=None)


def _trimmed(q: Query, times: Sequence[float]) -> Query:
    """The window from the hour of its first row on: a quiet morning is not drawn."""
    inside = [t for t in times if q.since <= t <= q.until]
    if q.incident is not None or not inside:
        return q
    first = min(inside)
    return replace(q, since=max(q.since, first - first % HOUR))


def group(rows: Sequence[Row]) -> list[Incident]:
    """Rows of one terminal (oldest first) → its incidents. A diagnosis that precedes an
    incident's first row belongs to that incident (the checker read the screen, then
    Autopilot acted on the answer)."""
    groups: list[list[Row]] = []
    numbered: dict[int, list[Row]] = {}
    pending: list[Row] = []
    for r in rows:
        if r.badge in NOT_INCIDENTS and r.incident is None:
            continue
        if r.badge == DIAGNOSIS_BADGE and r.incident is None:
            pending.append(r)
            continue
        n = r.incident
        if n is not None and n in numbered:
            current = numbered[n]
        elif n is None and groups and _same(groups[-1], r):
            current = groups[-1]
        else:
            current = []
            groups.append(current)
            if n is not None:
                numbered[n] = current
        current.extend(p for p in pending if p.prompt == r.prompt or not p.prompt)
        groups.extend([p] for p in pending if not (p.prompt == r.prompt or not p.prompt))
        pending = []
        current.append(r)
    groups.extend([p] for p in pending)
    return sorted((_incident(sorted(g, key=lambda r: r.at)) for g in groups if g),
                  key=lambda i: i.opened_at)


def _same(group_rows: Sequence[Row], r: Row) -> bool:
    last = group_rows[-1]
    return (last.incident is None and last.prompt == r.prompt and r.at - last.at <= GAP
            and last.badge not in ("Skipped",))


def _incident(rows: Sequence[Row]) -> Incident:
    first = next((r for r in rows if r.badge != DIAGNOSIS_BADGE), rows[0])
    return Incident(first.terminal, first.incident, rows[0].at, rows[-1].at,
                    first.trigger or rows[0].trigger, first.prompt, rows[-1].badge,
                    tuple(rows), tuple(d for r in rows if (d := diagnosis(r)) is not None))


def diagnosis(r: Row) -> Diagnosis | None:
    if r.badge != DIAGNOSIS_BADGE:
        return None
    g = r.readings
    answers = []
    listed = g.get("attempts")
    for a in listed if isinstance(listed, list) else ():
        if isinstance(a, Mapping):
            answers.append(CheckerAnswer(
                text(a.get("checker")), text(a.get("model")) or None,
                text(a.get("outcome")), _number(a.get("seconds")), text(a.get("detail"))))
    return Diagnosis(r.at, text(g.get("checker")), text(g.get("state")),
                     _number(g.get("seconds")), text(g.get("evidence")), tuple(answers))


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else 0.0


def timeline(rows: Sequence[Row], since: float, until: float,
             seen: float | None = None) -> tuple[Segment, ...]:
    """Consecutive states from when the terminal is first known (`seen`: its agent's start or
    its first token use, else its first row) to `until`: working until a row says otherwise;
    before that nothing is drawn (the agent may not have existed). A diagnosis is drawn over
    the seconds its checkers took (its row is written when they are done); after it the
    terminal is in whatever state it was."""
    out: list[Segment] = []
    first = None
    if rows:     # a first row that is a diagnosis: its checkers read the screen before it
        d = diagnosis(rows[0])
        first = rows[0].at - (max(d.seconds, 1.0) if d is not None else 0.0)
    known = min([t for t in (seen, first) if t is not None], default=None)
    if known is None:
        return ()
    since = max(since, known)
    state, start = "working", since
    for r in rows:
        new = BADGE_STATE.get(r.badge, state)
        if new != state:
            if r.at > start:
                out.append(Segment(start, r.at, state))
            state, start = new, r.at
    if until > start:
        out.append(Segment(start, until, state))
    for r in rows:
        d = diagnosis(r)
        if d is not None:
            out = _overlay(out, max(since, r.at - max(d.seconds, 1.0)), min(r.at, until),
                           "diagnosing")
    return tuple(out)


def _overlay(segments: Sequence[Segment], start: float, end: float, state: str
             ) -> list[Segment]:
    if end <= start:
        return list(segments)
    out: list[Segment] = []
    for s in segments:
        if s.end <= start or s.start >= end:
            out.append(s)
            continue
        if s.start < start:
            out.append(Segment(s.start, start, s.state))
        if s.end > end:
            out.append(Segment(end, s.end, s.state))
    out.append(Segment(start, end, state))
    return sorted(out, key=lambda s: s.start)


def per_hour(rows: Sequence[Row], since: float, until: float) -> tuple[tuple[float, int], ...]:
    """Restarts (resumes, continues, switches) in each clock hour of the window, zeros too."""
    start = max(since, until - MAX_HOURS * HOUR)
    first, last = start - start % HOUR, until - until % HOUR
    counts = {first + i * HOUR: 0 for i in range(int((last - first) // HOUR) + 1)}
    for r in restarts(rows):
        if first <= r.at <= until:
            hour = r.at - r.at % HOUR
            counts[hour] = counts.get(hour, 0) + 1
    return tuple(sorted(counts.items()))


def restarts(rows: Sequence[Row]) -> list[Row]:
    """The rows that are a restart: a resume, a switch to the backup, a continue. The message
    that asks a just-resumed agent to continue is part of that resume, not a restart of its
    own: its row carries the resume's attempt number (a new try counts one more)."""
    out: list[Row] = []
    tried: dict[object, int] = {}
    for r in sorted(rows, key=lambda r: r.at):
        if r.badge not in RESTART_BADGES:
            continue
        key = r.incident if r.incident is not None else (r.terminal, r.prompt)
        if r.badge == "Continued" and r.attempt and tried.get(key) == r.attempt:
            continue
        tried[key] = r.attempt
        out.append(r)
    return out
