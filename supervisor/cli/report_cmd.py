"""`pitcrew report`: the incident report — as one self-contained HTML file, as JSON, or as
a short summary on the terminal."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

from pitcrew.supervisor.api import report as report_api
from pitcrew.supervisor.core.errors import PitcrewError
from pitcrew.supervisor.core.report_rows import plural, printable, printable_json
from pitcrew.supervisor.service.app_context import load_context


def report(args: argparse.Namespace) -> int:
    ctx = load_context(args.tmux_socket)
    since = report_api.parse_span(args.since) if args.since else None
    if args.incident is not None and args.incident < 1:
        raise PitcrewError("--incident: expected an incident number (1, 2, …)")
    rep = report_api.gather(ctx.paths, ctx.registry, time.time(), args.terminal,
                            args.incident, since)
    if args.html:
        path = Path(args.html).expanduser()
        try:
            report_api.write_html(rep, path)
        except OSError as exc:
            raise PitcrewError(f"cannot write {path}: {exc.strerror or exc}") from exc
        if not args.json:
            print(f"Wrote {path} ({plural(len(rep.terminals), 'terminal')}, "
                  f"{plural(sum(len(t.incidents) for t in rep.terminals), 'incident')}, "
                  f"{plural(len(rep.anomalies), 'anomaly')}).")
    if args.json:
        sys.stdout.write(printable_json(json.dumps(report_api.to_json(rep), indent=2,
                                                   ensure_ascii=False)) + "\n")
    elif not args.html:
        _summary(rep)
    return 0


def _summary(rep: report_api.Report) -> None:
    def when(at: float) -> str:
        return dt.datetime.fromtimestamp(at).strftime("%m-%d %H:%M")

    print(f"Incident report, {printable(rep.title)}: {when(rep.since)} → {when(rep.until)}")
    if not rep.terminals:
        print("No Autopilot decisions in this window.")
    for t in rep.terminals:
        tokens = f", {t.tokens.tokens:,} tokens" if t.tokens else ""
        restarts = sum(n for _, n in t.restarts_per_hour)
        print(f"  {printable(t.terminal)}  {printable(t.agent or '?')} · "
              f"{printable(t.project or '?')}: "
              f"{plural(len(t.incidents), 'incident')}, {plural(restarts, 'restart')}{tokens}")
    for a in rep.anomalies:
        print(f"  [{a.severity.value}] {when(a.at)} {printable(a.terminal)}: {printable(a.text)}"
              + (f" (×{a.count})" if a.count > 1 else ""))
    if rep.skipped_rows:
        print(f"  ({rep.skipped_rows} unreadable ledger lines skipped)")
    print("Use --html FILE for timelines and every decision, --json for the data.")
