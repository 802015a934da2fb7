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


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report", help="incident report: timelines, incidents, checker answers, anomalies",
        description="The incident report, from the ledger (all rotated files), state.json and "
        "the agents' session files: per terminal a state timeline, each incident with every "
        "decision and reading behind it, the checkers' answers with timings, anomalies with "
        "a severity, restarts per hour and token usage. Default: the last 24 hours.")
    p.add_argument("terminal", nargs="?", metavar="TERMINAL",
                   help="only this terminal: its name (work:%%3), pane id (%%3) or key")
    p.add_argument("--incident", type=int, metavar="N", help="only incident N (all history)")
    p.add_argument("--since", metavar="SPAN", help="how far back: 24h (default), 90m, 7d, 1w")
    p.add_argument("--html", metavar="FILE", help="write one self-contained HTML file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=report)


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
