"""The incident report as one self-contained HTML file: CSS and SVG inline, no script, no
fonts, no images, nothing fetched — a Content-Security-Policy meta tag forbids it too, so a
report opened from a mail or a bug tracker cannot call out.

Everything shown comes from agents' screens and prompts (untrusted text): every value passes
through `esc` (HTML escaping, quotes included) on its way into the page, attributes and SVG
alike; the page is assembled from `string.Template`s whose `$names` are filled only with
escaped text or markup built here.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from collections.abc import Callable, Iterable, Sequence
from string import Template

from pitcrew.supervisor.core.anomalies import Anomaly
from pitcrew.supervisor.core.report import HOUR, STATES, Incident, Report, TerminalReport
from pitcrew.supervisor.core.report_rows import LATEST, Row, plural, printable
from pitcrew.supervisor.core.timeouts import duration
from pitcrew.supervisor.core.usage import SPIKES

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STATE_COLOR = {"working": "#2f9e62", "scheduled": "#3b7dd8", "diagnosing": "#8a5cd1",
               "waiting": "#e0a021", "stopped": "#d64545"}
OTHER_COLOR = "#9aa0a6"
SEVERITY_COLOR = {"critical": "#d64545", "warning": "#d98a00", "info": "#3b7dd8"}
WIDTH = 960
SHOWN_APART = frozenset({"attempts"})   # readings shown in their own table
_When = Callable[..., str]

PAGE = Template("""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="$csp">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pitcrew incident report — $title</title>
<style>$css</style></head>
<body><header><h1>Pitcrew incident report <span class="muted">— $title</span></h1>
<p class="muted">$window · generated $generated$skipped</p>
<div class="pills">$pills</div></header>
<section><h2>Anomalies</h2>$anomalies</section>
$terminals
<footer class="muted">Times are $zone. Written by <code>pitcrew report</code>; the same data:
<code>pitcrew report --json</code>.</footer>
</body></html>
""")

CSS = """
:root{color-scheme:light;--ink:#1d2330;--muted:#667085;--line:#e4e7ec;--card:#fff;--bg:#f5f6f8}
*{box-sizing:border-box}body{margin:0;padding:24px 32px;background:var(--bg);color:var(--ink);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 10px}
h3{font-size:14px;margin:14px 0 6px}.muted{color:var(--muted);font-weight:normal}
code{font-family:"DejaVu Sans Mono",monospace;font-size:12px}
header{margin-bottom:18px}section,.terminal{background:var(--card);border:1px solid var(--line);
border-radius:10px;padding:16px 18px;margin:0 0 16px}
.pills{display:flex;gap:8px;flex-wrap:wrap;margin-top:10px}.pill{background:var(--card);
border:1px solid var(--line);border-radius:999px;padding:3px 12px}.pill b{margin-right:4px}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:5px 8px;
border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600}
.sev{display:inline-block;min-width:64px;text-align:center;border-radius:4px;color:#fff;
font-size:11px;font-weight:700;padding:1px 6px;text-transform:uppercase}
.badge{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;font-weight:600;
background:#eef1f5;white-space:nowrap}.kv{font-size:12px;color:#475467;word-break:break-word}
.meta{display:flex;gap:18px;flex-wrap:wrap;color:var(--muted);font-size:13px;margin:2px 0 8px}
.meta b{color:var(--ink);font-weight:600}.charts{display:flex;gap:24px;flex-wrap:wrap}
details{border:1px solid var(--line);border-radius:8px;padding:8px 12px;margin:8px 0}
summary{cursor:pointer;font-weight:600}.legend{display:flex;gap:12px;font-size:12px;color:var(--muted)}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
svg text{font:11px system-ui,"DejaVu Sans",sans-serif;fill:#667085}
"""


def esc(value: object) -> str:
    """HTML-escaped, and control characters shown as their escape text (`\\x1b`): a file
    opened with `cat` or `less` acts on none, and a lone surrogate cannot stop its writing."""
    return html.escape(printable(value), quote=True)


def render(report: Report, zone: dt.tzinfo | None = None) -> str:
    def when(at: float, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
        return dt.datetime.fromtimestamp(at, zone).strftime(fmt)

    incidents = sum(len(t.incidents) for t in report.terminals)
    restarts = sum(n for t in report.terminals for _, n in t.restarts_per_hour)
    tokens = sum(t.tokens.tokens for t in report.terminals if t.tokens)
    by_sev = {s: sum(1 for a in report.anomalies if a.severity.value == s)
              for s in SEVERITY_COLOR}
    pills = [plural(n, w) for w, n in [
        ("terminal", len(report.terminals)), ("incident", incidents), ("restart", restarts),
        *((f"{s} anomaly", n) for s, n in by_sev.items() if n)]]
    if tokens:
        pills.append(plural(tokens, "token"))
    zone_name = dt.datetime.fromtimestamp(report.generated_at, zone).astimezone(zone).tzname()
    return PAGE.substitute(
        csp=esc(CSP), title=esc(report.title), css=CSS,
        window=esc(f"{when(report.since, '%Y-%m-%d %H:%M')} → "
                   f"{when(report.until, '%Y-%m-%d %H:%M')}"),
        generated=esc(when(report.generated_at)),
        skipped=esc(f" · {report.skipped_rows} unreadable ledger lines skipped")
        if report.skipped_rows else "",
        pills="".join(f'<span class="pill"><b>{esc(n)}</b>{esc(w)}</span>'
                      for n, _, w in (p.partition(" ") for p in pills)),
        anomalies=_anomalies(report.anomalies, when),
        terminals="\n".join(_terminal(t, report, when) for t in report.terminals)
        or '<section><p class="muted">No terminal in this window.</p></section>',
        zone=esc(f"local time ({zone_name})" if zone_name else "local time"))


def _anomalies(found: Sequence[Anomaly], when: _When) -> str:
    if not found:
        return '<p class="muted">None: nothing looked wrong in this window.</p>'
    rows = "".join(
        f'<tr><td><span class="sev" style="background:{SEVERITY_COLOR.get(a.severity.value)}">'
        f'{esc(a.severity.value)}</span></td><td>{esc(when(a.at))}</td>'
        f'<td><code>{esc(a.terminal)}</code></td><td>{esc(a.text)}'
        f'{esc(f" (×{a.count})") if a.count > 1 else ""}</td></tr>' for a in found)
    return ("<table><tr><th>severity</th><th>when</th><th>terminal</th><th>what</th></tr>"
            f"{rows}</table>")


def _terminal(t: TerminalReport, report: Report, when: _When) -> str:
    meta = [("agent", t.agent or "?"), ("project", t.project or "?"),
            ("session", t.session_id or "—"), ("now", t.health or "—")]
    if t.tokens:
        cost = f" · ${t.tokens.cost:,.2f}" if t.tokens.cost is not None else ""
        meta.append(("tokens", f"{t.tokens.tokens:,} ({t.tokens.input:,} in, "
                               f"{t.tokens.output:,} out, {t.tokens.cached:,} cached){cost}"))
    parts = [f'<div class="terminal" id="{esc(_anchor(t.terminal))}">',
             f"<h2>{esc(t.agent or 'Agent')} <span class=\"muted\">· "
             f"<code>{esc(t.terminal)}</code></span></h2>",
             '<div class="meta">' + "".join(f"<span>{esc(k)} <b>{esc(v)}</b></span>"
                                             for k, v in meta) + "</div>",
             "<h3>State timeline</h3>", _timeline_svg(t, report, when), _legend(),
             '<div class="charts"><div><h3>Restarts per hour</h3>',
             _bars(t.restarts_per_hour, when, "restarts-chart", "#3b7dd8", "%H:%M", HOUR),
             "</div>"]
    if t.token_windows:
        spiky = {s.at for s in t.spikes}
        parts += ["<div><h3>Tokens per 10 minutes</h3>",
                  _bars(t.token_windows, when, "tokens-chart", "#8a5cd1", "%H:%M", SPIKES.window,
                        spiky),
                  "</div>"]
    parts.append("</div>")
    parts.append(f"<h3>Incidents ({len(t.incidents)})</h3>")
    parts += [_incident(i, when) for i in t.incidents] or \
        ['<p class="muted">No incident in this window.</p>']
    parts.append("</div>")
    return "\n".join(parts)


def _anchor(terminal: str) -> str:
    return "t-" + "".join(c if c.isalnum() else "-" for c in terminal)


def _legend() -> str:
    items = [*((s, STATE_COLOR[s]) for s in STATES), ("decision", "#1d2330")]
    return '<div class="legend">' + "".join(
        f'<span><i style="background:{c}"></i>{esc(s)}</span>' for s, c in items) + "</div>"


def _timeline_svg(t: TerminalReport, report: Report, when: _When) -> str:
    left, right, height = 8.0, WIDTH - 8.0, 64
    span = max(report.until - report.since, 1.0)

    def x(at: float) -> float:
        return left + (right - left) * min(max((at - report.since) / span, 0.0), 1.0)

    out = [f'<svg class="timeline" width="{WIDTH}" '
           f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
           f'aria-label="state timeline of {esc(t.terminal)}">',
           f'<rect x="{left}" y="14" width="{right - left}" height="22" rx="4" fill="#eef1f5"/>']
    for s in t.segments:
        w = max(x(s.end) - x(s.start), 1.0)
        out.append(f'<rect x="{x(s.start):.1f}" y="14" width="{w:.1f}" height="22" '
                   f'fill="{STATE_COLOR.get(s.state, OTHER_COLOR)}"><title>{esc(s.state)}: '
                   f'{esc(when(s.start))} → {esc(when(s.end))}</title></rect>')
    for r in t.marks:
        out.append(f'<line x1="{x(r.at):.1f}" x2="{x(r.at):.1f}" y1="8" y2="42" '
                   f'stroke="#1d2330" stroke-width="1.5"><title>{esc(when(r.at))} '
                   f'{esc(r.badge)}: {esc(r.reason)}</title></line>')
    # ticks precise enough that no two read the same (a short window shows its seconds)
    fmt = "%H:%M:%S" if span < 600 else ("%H:%M" if span < 86400 else "%m-%d %H:%M")
    for i in range(5):
        at = report.since + span * i / 4
        anchor = "start" if i == 0 else ("end" if i == 4 else "middle")
        out.append(f'<text x="{x(at):.1f}" y="56" text-anchor="{anchor}">'
                   f'{esc(when(at, fmt))}</text>')
    out.append("</svg>")
    return "".join(out)


def _bars(points: Sequence[tuple[float, int]], when: _When, cls: str, color: str,
          fmt: str, step_s: float, hot: Iterable[float] = ()) -> str:
    """A bar per bucket of `step_s` seconds; the axis runs from the first bucket's start to the
    last one's end (one bucket: 13:00 … 14:00, never 13:00 … 13:00)."""
    width, height, base = 440, 90, 70
    hot = set(hot)
    top = max((n for _, n in points), default=0) or 1
    step = width / max(len(points), 1)
    out = [f'<svg class="{cls}" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
           f'<line x1="0" x2="{width}" y1="{base}" y2="{base}" stroke="#d0d5dd"/>']
    for i, (at, n) in enumerate(points):
        h = 0 if n == 0 else max(2.0, (base - 12) * n / top)
        fill = "#d64545" if at in hot else color
        out.append(f'<rect x="{i * step + 1:.1f}" y="{base - h:.1f}" '
                   f'width="{max(step - 2, 1):.1f}" height="{h:.1f}" fill="{fill}" rx="1">'
                   f'<title>{esc(when(at, fmt))}–{esc(when(at + step_s, fmt))}: {n:,}</title>'
                   '</rect>')
        if n and step >= 14:
            out.append(f'<text x="{i * step + step / 2:.1f}" y="{base - h - 3:.1f}" '
                       f'text-anchor="middle">{esc(_short(n))}</text>')
    if points:
        out.append(f'<text x="0" y="{height - 4}">{esc(when(points[0][0], fmt))}</text>')
        out.append(f'<text x="{width}" y="{height - 4}" text-anchor="end">'
                   f'{esc(when(points[-1][0] + step_s, fmt))}</text>')
    out.append("</svg>")
    return "".join(out)


def _short(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else (f"{n / 1e3:.0f}k" if n >= 1e4 else str(n))


def _incident(i: Incident, when: _When) -> str:
    number = f"#{i.number}" if i.number is not None else "#?"
    took = i.last_at - i.opened_at
    head = (f"<summary>{esc(number)} · {esc(i.trigger or 'incident')} · "
            f"{esc(when(i.opened_at))} · <span class=\"badge\">{esc(i.outcome)}</span> "
            f"<span class=\"muted\">({esc(duration(took))}, {len(i.rows)} rows)</span>"
            "</summary>")
    prompt = (f'<p class="kv">prompt: <code>{esc(i.prompt)}</code></p>' if i.prompt else "")
    rows = "".join(_row(r, when) for r in i.rows)
    table = ("<table><tr><th>when</th><th>decision</th><th>why</th><th>attempt</th>"
             f"<th>readings</th></tr>{rows}</table>")
    answers = "".join(
        f"<tr><td>{esc(when(d.at, '%H:%M:%S'))}</td><td>{esc(a.checker)}"
        f"{esc(':' + a.model) if a.model else ''}</td><td>{esc(a.outcome)}</td>"
        f"<td>{a.seconds:.1f} s</td><td class=\"kv\">{esc(a.detail)}</td></tr>"
        for d in i.diagnoses for a in d.answers)
    checkers = ("<h3>Checker answers</h3><table><tr><th>when</th><th>checker</th>"
                f"<th>answer</th><th>took</th><th>detail</th></tr>{answers}</table>"
                if answers else "")
    return f'<details class="incident" open>{head}{prompt}{table}{checkers}</details>'


def _row(r: Row, when: _When) -> str:
    readings = "; ".join(f"{k}: {_reading(k, v, when)}" for k, v in r.readings.items()
                         if k not in SHOWN_APART)
    return (f"<tr><td>{esc(when(r.at, '%H:%M:%S'))}</td><td><span class=\"badge\">"
            f"{esc(r.badge)}</span></td><td>{esc(r.reason)}</td><td>{r.attempt or ''}</td>"
            f'<td class="kv">{esc(readings)}</td></tr>')


def _reading(key: str, v: object, when: _When) -> str:
    """A reading as a person reads it: a time (`wake_at`, seconds since 1970) as a time."""
    if (key == "at" or key.endswith(("_at", "_until", "_since"))) and isinstance(
            v, int | float) and not isinstance(v, bool) and 0 < v < LATEST:
        return when(v)
    return _value(v)


def _value(v: object) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
