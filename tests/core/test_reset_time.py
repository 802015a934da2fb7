"""Reset instants and retry delays, computed exactly from a given moment and zone."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pitcrew.supervisor.core.reset_time import JUST_PASSED, duration_seconds, parse_reset

UTC = dt.UTC
PARIS = ZoneInfo("Europe/Paris")
NY = ZoneInfo("America/New_York")
NOW = dt.datetime(2026, 11, 30, 23, 0, tzinfo=PARIS)  # 23:00 in Paris, 17:00 in New York


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Claude AI usage limit reached|1753203600", dt.datetime(2025, 7, 22, 17, 0, tzinfo=UTC)),
        ('{"type":"usage_limit_reached","resets_at":1777936568}',
         dt.datetime.fromtimestamp(1777936568, UTC)),
        ("Your limit will reset at 9am (America/New_York)", dt.datetime(2026, 12, 1, 9, tzinfo=NY)),
        ("5-hour limit reached ∙ resets 5am", dt.datetime(2026, 12, 1, 5, tzinfo=PARIS)),
        ("resets 2:30am (Europe/Paris)", dt.datetime(2026, 12, 1, 2, 30, tzinfo=PARIS)),
        ("resets 11:30pm (Europe/Paris)", dt.datetime(2026, 11, 30, 23, 30, tzinfo=PARIS)),
        ("You've hit your limit · resets 8pm (America/New_York)",
         dt.datetime(2026, 11, 30, 20, tzinfo=NY)),
        ("try again in 4 days 6 hours", NOW + dt.timedelta(days=4, hours=6)),
        ("try again in 5 days 22 hours 11 minutes.",
         NOW + dt.timedelta(days=5, hours=22, minutes=11)),
        ("Usage resets in 3h 57m", NOW + dt.timedelta(hours=3, minutes=57)),
        ("try again at 3:45 PM", dt.datetime(2026, 12, 1, 15, 45, tzinfo=PARIS)),
        ("or try again at Jul 23rd, 2027 4:15 AM.", dt.datetime(2027, 7, 23, 4, 15, tzinfo=PARIS)),
        ("try again at Aug 20, 2027, 7:38 AM", dt.datetime(2027, 8, 20, 7, 38, tzinfo=PARIS)),
        ("Weekly limit reached ∙ resets Dec 3, 6pm (America/New_York)",
         dt.datetime(2026, 12, 3, 18, tzinfo=NY)),
        ("limit resets at 2026-12-01T04:00:00Z", dt.datetime(2026, 12, 1, 4, tzinfo=UTC)),
        ("available again at 2026-12-01 09:30:00+01:00",
         dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone(dt.timedelta(hours=1)))),
        ("resets 14:30", dt.datetime(2026, 12, 1, 14, 30, tzinfo=PARIS)),
        ("resets 7pm (Mars/Olympus)", dt.datetime(2026, 12, 1, 19, tzinfo=PARIS)),  # unknown zone
        ("resets 10pm UTC", dt.datetime(2026, 11, 30, 22, tzinfo=UTC)),   # = NOW: it has come
        ("resets 9:30pm UTC", dt.datetime(2026, 12, 1, 21, 30, tzinfo=UTC)),   # 30 min ago
    ],
)
def test_reset_instants(text: str, expected: dt.datetime) -> None:
    assert parse_reset(text, NOW, PARIS).reset_at == expected


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("Retrying in 12 seconds… (attempt 3/10)", 12),
        ("⎿ API Error (Connection error.) · Retrying in 5 seconds… (attempt 1/10)", 5),
        ("stream error: retrying 1/5 in 200ms…", 0.2),
        ("Retrying in 11s · attempt 8/10", 11),
        ("retry-after: 30", 30),
        ("Retrying in 0.5 seconds...", 0.5),
    ],
)
def test_retry_delays(text: str, seconds: float) -> None:
    info = parse_reset(text, NOW, PARIS)
    assert info.retry_after == seconds
    assert info.reset_at is None


@pytest.mark.parametrize("text", ["resets 5", "the reset button", "retry", "at 3", "429", ""])
def test_no_time_is_invented(text: str) -> None:
    assert parse_reset(text, NOW, PARIS) == parse_reset("", NOW, PARIS)


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError):
        parse_reset("resets 5am", dt.datetime(2026, 1, 1), PARIS)


@pytest.mark.parametrize(("text", "read_at", "expected"), [
    # read 107 s after it: that limit has reset (not tomorrow at 2:01pm)
    ("resets 2:01pm", dt.datetime(2026, 12, 2, 14, 2, 47, tzinfo=PARIS),
     dt.datetime(2026, 12, 2, 14, 1, tzinfo=PARIS)),
    # a little after midnight: yesterday's 11:59pm just passed
    ("resets 11:59pm (Europe/Paris)", dt.datetime(2026, 12, 3, 0, 2, tzinfo=PARIS),
     dt.datetime(2026, 12, 2, 23, 59, tzinfo=PARIS)),
    ("resets 3pm (America/New_York)", dt.datetime(2026, 12, 2, 21, 3, tzinfo=PARIS),
     dt.datetime(2026, 12, 2, 15, 0, tzinfo=NY)),
    # passed longer ago than JUST_PASSED, when the line appeared: the next one (Claude Code
    # shows "resets 10pm" at 11pm for tomorrow's 10pm)
    ("resets 10pm", dt.datetime(2026, 12, 2, 23, 0, tzinfo=PARIS),
     dt.datetime(2026, 12, 3, 22, 0, tzinfo=PARIS)),
])
def test_a_clock_time_just_passed_is_that_moment_not_tomorrow(
        text: str, read_at: dt.datetime, expected: dt.datetime) -> None:
    assert parse_reset(text, read_at, PARIS).reset_at == expected


def test_durations() -> None:
    assert duration_seconds("4 days 6 hours") == 367200
    assert duration_seconds("1h 30m") == 5400
    assert duration_seconds("nothing") is None


zones = st.sampled_from(["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata",
                         "Australia/Lord_Howe", "America/Santiago", "Pacific/Chatham"])


@given(
    now=st.datetimes(min_value=dt.datetime(2024, 1, 1), max_value=dt.datetime(2030, 12, 31),
                     timezones=st.just(UTC)),
    hour=st.integers(1, 12), minute=st.integers(0, 59), pm=st.booleans(), zone=zones,
)
def test_a_clock_time_is_always_the_next_such_moment_in_its_zone(now, hour, minute, pm, zone):
    text = f"resets {hour}:{minute:02d}{'pm' if pm else 'am'} ({zone})"
    got = parse_reset(text, now, UTC).reset_at
    assert got is not None
    if got <= now:   # just passed: read a little late, that limit has reset
        assert now - got <= JUST_PASSED
    else:            # else the next such moment: one passed longer ago rolls to the next day
        assert got - now <= dt.timedelta(hours=25), "never more than a day (+DST) ahead"
        earlier = got - dt.timedelta(days=1)
        assert earlier.astimezone(ZoneInfo(zone)).hour != got.astimezone(ZoneInfo(zone)).hour \
            or earlier < now - JUST_PASSED
    tz = ZoneInfo(zone)
    local = got.astimezone(tz)
    h24 = hour % 12 + (12 if pm else 0)
    wall = dt.datetime(local.year, local.month, local.day, h24, minute, tzinfo=tz)
    exists = wall.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == wall.replace(tzinfo=None)
    if exists:  # inside a DST gap the named wall time does not exist on that day
        assert (local.hour, local.minute) == (h24, minute)


@given(st.text(max_size=3000))
def test_never_raises_on_any_text(text: str) -> None:
    parse_reset(text, NOW, PARIS)
