"""The incident report's model: ledger rows in, timelines, incidents, anomalies, restarts per
hour and tokens out (core/report.py, core/anomalies.py, core/usage.py)."""

from __future__ import annotations

from pitcrew.supervisor.core import usage
from pitcrew.supervisor.core.anomalies import Severity
from pitcrew.supervisor.core.report import Query, TerminalInfo, build, group, per_hour
from pitcrew.supervisor.core.report_rows import Row, parse_row
from pitcrew.supervisor.core.usage import UsageFields, UsageStep

T0 = 1_800_000_000.0 - 1_800_000_000.0 % 3600   # on the hour
H = 3600.0


def r(badge: str, at: float, trigger: str = "process exited", reason: str = "",
      terminal: str = "work:%3", prompt: str = "fix the tests", attempt: int = 0,
      **readings: object) -> Row:
    return Row(T0 + at, terminal, badge, "decision", "Claude Code", prompt, "/p", trigger,
               reason, attempt, readings)


def test_rows_are_grouped_into_incidents_by_their_number_with_the_diagnosis_before_them():
    rows = [r("Scheduled", 0, incident=1), r("Resumed", 5, attempt=1, incident=1),
            r("Typed", 50, trigger="message"),                     # a delivery: no incident
            r("Diagnosed", 100, "task went quiet", checker="codex", seconds=8.2,
              state="rate_limit", attempts=[{"checker": "claude", "model": "sonnet",
                                             "outcome": "timeout", "seconds": 60.0},
                                            {"checker": "codex", "outcome": "answered",
                                             "seconds": 8.2}]),
            r("Scheduled", 102, "task went quiet", incident=2, screen="rate_limit"),
            r("Continued", 900, "task went quiet", incident=2),
            r("Resumed", 901, attempt=2, incident=1)]               # late row of incident 1
    found = group(rows)
    assert [(i.number, len(i.rows), i.trigger, i.outcome) for i in found] == [
        (1, 3, "process exited", "Resumed"), (2, 3, "task went quiet", "Continued")]
    diag = found[1].diagnoses[0]
    assert (diag.by, diag.state, diag.seconds) == ("codex", "rate_limit", 8.2)
    assert [(a.checker, a.model, a.outcome, a.seconds) for a in diag.answers] == [
        ("claude", "sonnet", "timeout", 60.0), ("codex", None, "answered", 8.2)]


def test_rows_without_numbers_are_grouped_by_prompt_and_time():
    rows = [r("Scheduled", 0), r("Resumed", 5), r("Scheduled", 60, prompt="other task"),
            r("Resumed", 65, prompt="other task"), r("Scheduled", 65 + 2 * H,
                                                     prompt="other task")]
    assert [len(i.rows) for i in group(rows)] == [2, 2, 1]


def test_the_timeline_follows_the_badges_and_an_unknown_badge_keeps_the_state():
    rows = [r("Scheduled", 600, incident=1), r("Resumed", 605, incident=1),
            r("Waiting on you", 1200, incident=2), r("Some future badge", 1500, incident=2),
            r("Stopped retrying", 1800, incident=2)]
    rep = build(rows, Query(T0, T0 + H))
    t = rep.terminals[0]
    assert [(s.start - T0, s.end - T0, s.state) for s in t.segments] == [
        (600, 605, "scheduled"), (605, 1200, "working"),     # nothing before its first row
        (1200, 1800, "waiting"), (1800, H, "stopped")]
    assert len(t.marks) == 5                              # every row is a tick, unknown too
    assert [a.kind for a in rep.anomalies] == ["stopped"]


def test_restarts_are_counted_per_clock_hour_with_empty_hours_shown():
    rows = [r("Resumed", 10), r("Continued", 20), r("Scheduled", 30),
            r("Switched to backup", 2 * H + 5), r("Resumed", 4 * H)]
    counts = per_hour(rows, T0 + 10, T0 + 3 * H + 10)
    assert [(at - T0, n) for at, n in counts] == [(0, 2), (H, 0), (2 * H, 1), (3 * H, 0)]


def test_anomalies_have_a_severity_and_repeats_close_together_are_one():
    rows = [r("Scheduled", 0, reason="3 crashes within 120s: cooling down 120 s", incident=3),
            r("Scheduled", 30, reason="4 crashes within 120s: cooling down 120 s", incident=3),
            r("Couldn't resume", 300, reason="the resumed agent did not start", incident=3),
            r("Diagnosed", H, "task went quiet", state="rate_limit"),   # no reset time …
            r("Scheduled", H + 2, "task went quiet", incident=4, screen="rate_limit",
              reset_at="2026-12-01T14:00:00+00:00"),                   # … the same limit
            r("Scheduled", H + 60, "task went quiet", incident=4, screen="rate_limit",
              reset_at="2026-12-01T14:00:00+00:00"),                   # seen again: the same
            r("Scheduled", 3 * H, "task went quiet", incident=5, screen="rate_limit",
              reset_at="2026-12-01T19:00:00+00:00"),                   # a second limit
            r("Held", 4 * H, "looping", "repeated the same step 3 times", incident=6),
            r("Held", 5 * H, "hard timeout", "running for 30 min: holding", incident=7)]
    rep = build(rows, Query(T0, T0 + 6 * H))
    got = {(a.kind, a.severity, a.count) for a in rep.anomalies}
    assert got == {("crash_loop", Severity.CRITICAL, 2),
                   ("resume_not_started", Severity.CRITICAL, 1),
                   ("repeated_limit", Severity.WARNING, 1), ("loop", Severity.CRITICAL, 1),
                   ("timeout", Severity.WARNING, 1)}
    assert "usage limit hit 2 times" in [a.text for a in rep.anomalies]
    assert [a.severity for a in rep.anomalies] == sorted(
        (a.severity for a in rep.anomalies), key=list(Severity).index)   # worst first


def test_a_filter_by_pane_id_or_state_key_and_by_incident():
    rows = [r("Scheduled", 0, incident=1), r("Resumed", 5, incident=1),
            r("Scheduled", 100, incident=2), r("Resumed", 0, terminal="work:%5", incident=1)]
    info = {"work:%3": TerminalInfo("work:%3", "Claude Code", "/p", "sid-1", "working")}
    aliases = {"work:%3": ["srv:%3"]}
    for wanted in ("work:%3", "%3", "srv:%3"):
        rep = build(rows, Query(T0, T0 + H, wanted), info, aliases=aliases)
        assert [t.terminal for t in rep.terminals] == ["work:%3"]
        assert rep.terminals[0].session_id == "sid-1"
    rep = build(rows, Query(T0, T0 + H, "%3", incident=2), info, aliases=aliases)
    assert [(i.number, len(i.rows)) for i in rep.terminals[0].incidents] == [(2, 1)]
    rep = build(rows, Query(T0, T0 + H, incident=1))
    assert sorted(t.terminal for t in rep.terminals) == ["work:%3", "work:%5"]


def test_torn_or_foreign_rows_do_not_parse_and_unknown_kinds_do():
    assert parse_row({"at": "soon", "terminal": "work:%3"}) is None
    assert parse_row({"badge": "Resumed", "terminal": "work:%3"}) is None
    assert parse_row(["not", "an", "object"]) is None
    row = parse_row({"kind": "rerun", "at": T0, "terminal": "work:%3"})
    assert row is not None and (row.badge, row.kind, row.attempt, row.readings) == (
        "rerun", "rerun", 0, {})
    # a row of the wrong shape is skipped, not half-read
    for odd in ({"attempt": "x"}, {"readings": "nope"}, {"badge": 5}, {"prompt": ["x"]},
                {"at": float("nan")}, {"at": 1e300}, {"attempt": True}):
        assert parse_row({"kind": "decision", "at": T0, "terminal": "work:%3", **odd}) is None


CLAUDE = UsageFields(at="message.usage", key="message.id", match=(("type", "assistant"),),
                     input=("input_tokens", "cache_read_input_tokens"),
                     cached=("cache_read_input_tokens",), output=("output_tokens",),
                     cost="costUSD")
CODEX = UsageFields(at="payload.info.total_token_usage", cumulative=True,
                    match=(("type", "event_msg"), ("payload.type", "token_count")),
                    input=("input_tokens",), cached=("cached_input_tokens",),
                    output=("output_tokens",))


def test_claude_usage_counts_a_message_once_though_each_content_block_repeats_it():
    def rec(mid: str, out: int, at: str = "2026-12-01T10:00:00Z") -> dict[str, object]:
        return {"type": "assistant", "timestamp": at, "costUSD": 0.01,
                "message": {"id": mid, "usage": {"input_tokens": 100,
                                                 "cache_read_input_tokens": 900,
                                                 "output_tokens": out}}}
    records = [rec("m1", 5), rec("m1", 40), {"type": "user", "message": {"usage": {}}},
               rec("m2", 10, "2026-12-01T10:05:00Z"), {"type": "assistant", "message": "x"}]
    steps = usage.extract(records, CLAUDE)
    assert [(s.input, s.output, s.cached) for s in steps] == [(1000, 40, 900), (1000, 10, 900)]
    total = usage.totals(steps)
    assert (total.tokens, total.cached, total.calls, total.cost) == (2050, 1800, 2, 0.02)


def test_codex_running_totals_become_steps_and_a_restart_of_the_count_starts_over():
    def rec(inp: int, out: int) -> dict[str, object]:
        return {"type": "event_msg", "timestamp": "2026-12-01T10:00:00Z",
                "payload": {"type": "token_count",
                            "info": {"total_token_usage": {"input_tokens": inp,
                                                           "cached_input_tokens": inp // 2,
                                                           "output_tokens": out}}}}
    records = [{"type": "event_msg", "payload": {"type": "token_count", "info": None}},
               rec(1000, 100), rec(1000, 100), rec(3000, 300), rec(500, 50)]
    steps = usage.extract(records, CODEX)
    assert [(s.input, s.output) for s in steps] == [(1000, 100), (2000, 200), (500, 50)]
    assert usage.totals(steps).tokens == 3850
    assert usage.totals(steps).cost is None                 # Codex records no cost


def test_a_sudden_spike_is_found_and_steady_growth_is_not():
    steady = [UsageStep(T0 + n * 600, 20_000 + n * 500, 400) for n in range(30)]
    assert usage.spikes(steady) == []
    spiky = [*steady[:20], UsageStep(T0 + 20 * 600, 900_000, 400), *steady[21:]]
    found = usage.spikes(spiky)
    assert [(s.at - T0, s.tokens) for s in found] == [(12_000, 900_400)]
    assert usage.spikes(spiky[18:22]) == []                  # too little history to judge
    small = [UsageStep(T0 + n * 600, 100, 10) for n in range(10)]
    small.append(UsageStep(T0 + 6000, 5_000, 10))            # 50× but far below the floor
    assert usage.spikes(small) == []


def test_tokens_and_their_spike_reach_the_terminal_report():
    steps = [UsageStep(T0 + n * 600, 20_000, 400) for n in range(6)]
    steps.append(UsageStep(T0 + 3 * H, 900_000, 100))
    rep = build([], Query(T0, T0 + 4 * H), {"work:%3": TerminalInfo("work:%3")},
                {"work:%3": steps})
    t = rep.terminals[0]
    assert t.tokens is not None and t.tokens.tokens == 6 * 20_400 + 900_100
    assert [a.kind for a in rep.anomalies] == ["token_spike"]
    assert rep.anomalies[0].severity is Severity.WARNING


def test_a_diagnosis_is_drawn_over_the_seconds_its_checkers_took():
    rows = [r("Diagnosed", 600, "task went quiet", seconds=68.0, state="busy"),
            r("Scheduled", 1200, incident=1), r("Resumed", 1300, incident=1)]
    t = build(rows, Query(T0, T0 + H)).terminals[0]
    assert [(s.start - T0, s.end - T0, s.state) for s in t.segments] == [
        (532, 600, "diagnosing"), (600, 1200, "working"),
        (1200, 1300, "scheduled"), (1300, H, "working")]
