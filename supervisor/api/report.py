"""The incident report, gathered: the ledger (every rotated file), state.json and the
agents' session files (token usage) → `core.report.build` → a `Report`, as JSON or as one
self-contained HTML file (`api.report_html`).

Shared by `pitcrew report` and the dashboard's "Open report"; reading is all that happens
here, and none of it can fail loudly: an unreadable state file or session file only leaves
its part of the report empty.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Mapping
from pathlib import Path

from pitcrew.supervisor.adapters.usage import UsageReader
from pitcrew.supervisor.api.report_html import render
from pitcrew.supervisor.core.errors import PitcrewError
from pitcrew.supervisor.core.report import Query, Report, TerminalInfo, build

__all__ = ["Report", "gather", "parse_span", "to_json", "write_for_terminal", "write_html"]
from pitcrew.supervisor.core.report_rows import Row, parse_row
from pitcrew.supervisor.core.usage import UsageStep
from pitcrew.supervisor.providers.loader import Registry
from pitcrew.supervisor.service.app_context import load_context
from pitcrew.supervisor.store import state_store
from pitcrew.supervisor.store.ledger import Ledger, recordable
from pitcrew.supervisor.store.paths import Paths

DEFAULT_SINCE = 24 * 3600.0
GRACE = 3600.0      # rotated files this much older than the window are still read
_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNITS = {"": 3600.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def parse_span(text: str) -> float:
    """`24h`, `90m`, `2d`, `1w`, `3600s` (a bare number is hours) → seconds."""
    m = _SPAN.match(text)
    if not m or float(m.group(1)) <= 0:
        raise PitcrewError(f"--since: expected a time span like 24h, 90m or 7d, got {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


def gather(paths: Paths, registry: Registry, now: float, terminal: str | None = None,
           incident: int | None = None, since: float | None = None,
           reader: UsageReader | None = None, home: Path | None = None,
           environ: Mapping[str, str] | None = None, strict: bool = True) -> Report:
    """The report for `terminal` (all when None), one `incident`, or the last `since`
    seconds (default: 24 h; everything when an incident is asked for). `strict`: a terminal
    or incident that is nowhere is an error (the command line), else an empty report."""
    window = since if since is not None else (None if incident is not None else DEFAULT_SINCE)
    raw, skipped = Ledger(paths.ledger_file).read_all(
        now - window - GRACE if window is not None else None)
    rows: list[Row] = []
    for data in raw:
        row = parse_row(recordable(data))    # redacted again: rows written before redaction
        if row is None:
            skipped += 1
        else:
            rows.append(row)
    start = now - window if window is not None else min((r.at for r in rows), default=now)
    info: dict[str, TerminalInfo] = {}
    aliases: dict[str, list[str]] = {}
    usage: dict[str, tuple[UsageStep, ...]] = {}
    reader = reader or UsageReader()
    by_name = {p.display_name: p for p in registry}
    for key, t in state_store.load(paths.state_file).snapshot.terminals.items():
        info[t.terminal] = TerminalInfo(t.terminal, t.agent, t.project, t.session_id,
                                        t.health.value, t.agent_started)
        aliases.setdefault(t.terminal, []).append(key)
        provider = by_name.get(t.agent)
        if provider is not None:
            steps = reader.for_session(provider, t.session_id, t.project, home, environ)
            if steps is not None:
                usage[t.terminal] = steps
    report = build(rows, Query(start, now, terminal, incident), info, usage, skipped, aliases)
    if strict and terminal and not report.terminals:
        raise PitcrewError(f"no terminal {terminal!r} in the ledger or state "
                           "(see `pitcrew status` for names)")
    if strict and incident is not None and not report.terminals:
        raise PitcrewError(f"no incident {incident} in the ledger"
                           + (f" for {terminal}" if terminal else ""))
    return report


def to_json(report: Report) -> dict[str, object]:
    """The report as plain JSON data (what `pitcrew report --json` prints)."""
    return {
        "generated_at": _iso(report.generated_at), "since": _iso(report.since),
        "until": _iso(report.until), "title": report.title,
        "skipped_rows": report.skipped_rows,
        "anomalies": [a.to_json() for a in report.anomalies],
        "terminals": [{
            "terminal": t.terminal, "agent": t.agent, "project": t.project,
            "session_id": t.session_id, "health": t.health,
            "timeline": [{"start": s.start, "end": s.end, "state": s.state}
                         for s in t.segments],
            "incidents": [{
                "number": i.number, "opened_at": i.opened_at, "last_at": i.last_at,
                "trigger": i.trigger, "prompt": i.prompt, "outcome": i.outcome,
                "rows": [r.to_json() for r in i.rows],
                "diagnoses": [{"at": d.at, "by": d.by, "state": d.state,
                               "seconds": d.seconds, "evidence": d.evidence,
                               "answers": [{"checker": a.checker, "model": a.model,
                                            "outcome": a.outcome, "seconds": a.seconds,
                                            "detail": a.detail} for a in d.answers]}
                              for d in i.diagnoses],
            } for i in t.incidents],
            "restarts_per_hour": [{"hour": _iso(h), "restarts": n}
                                  for h, n in t.restarts_per_hour],
            "tokens": t.tokens.to_json() if t.tokens else None,
            "tokens_per_10_min": [{"start": _iso(at), "tokens": n}
                                  for at, n in t.token_windows],
            "token_spikes": [{"at": s.at, "tokens": s.tokens, "baseline": s.baseline}
                             for s in t.spikes],
        } for t in report.terminals],
    }


def write_for_terminal(terminal: str, now: float | None = None) -> Path:
    """The dashboard's "Open report": the last 24 hours of `terminal` written to
    `<data dir>/reports/`; the path, for the browser."""
    ctx = load_context()
    rep = gather(ctx.paths, ctx.registry, time.time() if now is None else now, terminal,
                 strict=False)
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", terminal).strip("-") or "terminal"
    return write_html(rep, ctx.paths.data_dir / "reports" / f"report-{name}.html")


def write_html(report: Report, path: Path) -> Path:
    """Write the report as one self-contained HTML file (atomically: a browser never opens
    half of one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    # no character a file cannot hold (a lone surrogate) fails the write: it shows escaped
    part.write_bytes(render(report).encode("utf-8", "backslashreplace"))
    part.replace(path)
    return path


def _iso(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).isoformat(timespec="seconds")
