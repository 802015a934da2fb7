"""Reading "when may I try again" out of a limit or retry message.

Theory of operation
-------------------
Agent CLIs state a usage limit's reset in many shapes; peers shipped bugs in each (resumed
3.5 h early across midnight, 24 h late from offset arithmetic in the wrong direction). The rules:

1. Structured beats prose: an epoch (`…limit reached|1753203600`, `"resets_at": 1777936568`)
   or an ISO timestamp is taken as is.
2. A wall-clock time (`resets 2:30am (Europe/Paris)`, `try again at 3:45 PM`) is built *in the
   zone the text names* — or the machine's zone when it names none — on today's date in that
   zone; when that instant is not after `now`, the next day's date is used (re-resolved, so DST
   is right) — unless it passed at most JUST_PASSED ago: CLIs print the minute only (a reset
   at 14:01:40 reads "2:01pm" until 14:02) and a line is read a moment after it appears, so
   a time just behind `now` is that moment, already come (a wait of none), not tomorrow's.
   Longer past is the next day: Claude Code shows "resets 10pm" at 11pm for tomorrow's 10pm
   (tests/fixtures/screens/reported/claude/rate_limit__limit_no_zone_rollover). `now` is
   when the line first appeared (SPEC §7; service/watched.py keeps that moment), so a line
   shown before its reset and read after it resolves to today's, already passed, instant.
   A date without a year takes this year, or the next one when it is long past.
3. A relative time (`try again in 4 days 6 hours`) counts from `now`, the moment the screen was
   captured — never from when it happens to be parsed.
4. `Retrying in 12 seconds…` and `retry-after: 30` are the CLI's (or server's) own retry delay:
   they become `retry_after` seconds, not a reset instant.

Everything here is pure: `now` and the local zone are arguments.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}
_UNIT_SECONDS = {
    "ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}
_ZONE_ALIASES = {"utc": "UTC", "gmt": "UTC", "z": "UTC"}
JUST_PASSED = dt.timedelta(minutes=5)   # a clock time this recently past has come (rule 2)
# Portuguese and Spanish month abbreviations, as Codex prints them in those locales
_MONTHS_PT_ES = {
    "jan": 1, "ene": 1, "fev": 2, "feb": 2, "mar": 3, "abr": 4, "mai": 5, "may": 5, "jun": 6,
    "jul": 7, "ago": 8, "set": 9, "sep": 9, "out": 10, "oct": 10, "nov": 11, "dez": 12, "dic": 12,
}

_UNIT = r"(?:milliseconds?|ms|weeks?|w|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)"
_DURATION = rf"(?:\d+(?:\.\d+)?\s*{_UNIT}(?![a-z])(?:\s*,?\s*(?:and\s+)?)?)+"

_EPOCH = re.compile(
    r"(?:limit reached\s*\|\s*|resets?_?at\"?\s*[:=]\s*\"?|reset_time\"?\s*[:=]\s*)(\d{10})(?!\d)",
    re.IGNORECASE,
)
_RESETS_IN_SECONDS = re.compile(r"resets?_in_seconds\"?\s*[:=]\s*(\d+)", re.IGNORECASE)
_ISO = re.compile(
    r"(?:reset|try again|retry|available|until|resume)[^\n]{0,40}?"
    r"(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?",
    re.IGNORECASE,
)
_RELATIVE = re.compile(
    rf"(?:(?:try again|resets?|available(?: again)?|retry|wait|come back)\s+(?:in|after)"
    rf"|\bwait(?: for)?)\s+(?:about\s+)?({_DURATION})",
    re.IGNORECASE,
)
_LOCALIZED_DATE = re.compile(
    r"(?P<day>\d{1,2}) de (?P<mon>[a-z]{3})\.? de (?P<year>\d{4}),? (?:a las |às )?"
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})",
    re.IGNORECASE,
)
_DATE = (
    r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?"
    r"(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+"
    r"(?P<day>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{4}))?,?\s+(?:at\s+)?"
)
_CLOCK = (
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?\s?m\b\.?)?"
    r"(?:\s*\((?P<zone>[A-Za-z_]+(?:/[A-Za-z0-9_+\-]+)*)\)"
    r"|\s+(?P<offset>(?:UTC|GMT)[+-]\d{1,2}(?::?\d{2})?)\b|\s+(?P<abbr>UTC|GMT)\b)?"
)
_ABSOLUTE = re.compile(
    rf"(?:resets?(?:\s+at)?|try again (?:at|on)|available (?:again )?at|until)\s+(?:on\s+)?"
    rf"(?:{_DATE})?{_CLOCK}",
    re.IGNORECASE,
)
_RETRY_AFTER = (
    re.compile(rf"retrying\s+(?:\d+/\d+\s+)?in\s+({_DURATION})", re.IGNORECASE),
    re.compile(r"retry[-_ ]after\"?\s*[:=]?\s*(\d+(?:\.\d+)?)\b(?!\s*[ap]m)", re.IGNORECASE),
)
_DURATION_PART = re.compile(rf"(\d+(?:\.\d+)?)\s*({_UNIT})(?![a-z])", re.IGNORECASE)


# One of these occurs in any text a pattern above matches.
_NEEDED_WORDS = ("reset", "try again", "retry", "available", "until", "resum", "wait",
                 "come back", "limit reached", "de ")


@dataclass(frozen=True, slots=True)
class ResetInfo:
    reset_at: dt.datetime | None = None
    retry_after: float | None = None


def parse_reset(text: str, now: dt.datetime, local: dt.tzinfo) -> ResetInfo:
    """Find a reset instant and/or a retry delay in `text`.

    `now` must be aware: it is when the text was on screen. `local` is the zone a wall-clock
    time without a named zone is read in.
    """
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    folded = text.casefold()
    if not any(word in folded for word in _NEEDED_WORDS):
        return ResetInfo()   # every shape below needs one of these words: skip the regexes
    return ResetInfo(reset_at=_reset_at(text, now, local), retry_after=_retry_after(text))


def _reset_at(text: str, now: dt.datetime, local: dt.tzinfo) -> dt.datetime | None:
    if m := _EPOCH.search(text):
        return dt.datetime.fromtimestamp(int(m.group(1)), tz=dt.UTC)
    if m := _RESETS_IN_SECONDS.search(text):
        return now + dt.timedelta(seconds=int(m.group(1)))
    if m := _ISO.search(text):
        return _iso(m, local)
    if m := _LOCALIZED_DATE.search(text):
        month = _MONTHS_PT_ES.get(m.group("mon").lower())
        if month:
            try:
                return _at(dt.date(int(m.group("year")), month, int(m.group("day"))),
                           int(m.group("hour")), int(m.group("minute")), local)
            except ValueError:
                pass
    for m in _ABSOLUTE.finditer(text):
        when = _absolute(m, now, local)
        if when is not None:
            return when
    if m := _RELATIVE.search(text):
        seconds = duration_seconds(m.group(1))
        if seconds:
            return now + dt.timedelta(seconds=seconds)
    return None


def _retry_after(text: str) -> float | None:
    for pattern in _RETRY_AFTER:
        if m := pattern.search(text):
            raw = m.group(1)
            seconds = float(raw) if raw.replace(".", "", 1).isdigit() else duration_seconds(raw)
            if seconds is not None:
                return seconds
    return None


def duration_seconds(text: str) -> float | None:
    """`4 days 6 hours` → 367200.0; `1h 30m` → 5400.0; None when there is no duration."""
    total = 0.0
    found = False
    for number, unit in _DURATION_PART.findall(text):
        total += float(number) * _UNIT_SECONDS[unit.lower()]
        found = True
    return total if found else None


def _zone(name: str | None, local: dt.tzinfo) -> dt.tzinfo:
    if not name:
        return local
    name = _ZONE_ALIASES.get(name.lower(), name)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return local


def _offset(text: str | None) -> dt.tzinfo | None:
    """`GMT-3`, `UTC+05:30` → a fixed-offset zone."""
    if not text:
        return None
    m = re.fullmatch(r"(?:UTC|GMT)([+-])(\d{1,2})(?::?(\d{2}))?", text, re.IGNORECASE)
    if m is None:
        return None
    delta = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
    if delta > dt.timedelta(hours=14):
        return None
    return dt.timezone(delta if m.group(1) == "+" else -delta)


def _iso(m: re.Match[str], local: dt.tzinfo) -> dt.datetime | None:
    date, hour, minute, second, offset = m.groups()
    try:
        naive = dt.datetime.fromisoformat(f"{date}T{hour}:{minute}:{second or '00'}")
    except ValueError:
        return None
    if not offset:
        return naive.replace(tzinfo=local)
    if offset.upper() in ("Z", "UTC"):
        return naive.replace(tzinfo=dt.UTC)
    sign = 1 if offset[0] == "+" else -1
    digits = offset[1:].replace(":", "")
    delta = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return naive.replace(tzinfo=dt.timezone(sign * delta))


def _absolute(m: re.Match[str], now: dt.datetime, local: dt.tzinfo) -> dt.datetime | None:
    hour = int(m.group("hour"))
    minute = int(m.group("minute") or 0)
    ampm = (m.group("ampm") or "").lower().replace(".", "").replace(" ", "")
    if not ampm and m.group("minute") is None:
        return None  # "resets 5" is not a time
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    zone = _offset(m.group("offset")) or _zone(m.group("zone") or m.group("abbr"), local)
    today = now.astimezone(zone).date()
    if m.group("mon"):
        month = _MONTHS[m.group("mon").lower()[:3]]
        year = int(m.group("year")) if m.group("year") else today.year
        try:
            when = _at(dt.date(year, month, int(m.group("day"))), hour, minute, zone)
        except ValueError:
            return None
        if not m.group("year") and when < now - dt.timedelta(days=180):
            when = _at(dt.date(year + 1, month, int(m.group("day"))), hour, minute, zone)
        return when
    days = [_at(today + dt.timedelta(days=d), hour, minute, zone) for d in (-1, 0, 1)]
    passed = [when for when in days if now - JUST_PASSED <= when <= now]
    if passed:
        return passed[-1]     # just passed (yesterday's, a little after midnight there)
    return next(when for when in days if when > now)


def _at(day: dt.date, hour: int, minute: int, zone: dt.tzinfo) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
