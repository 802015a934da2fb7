"""The machine's clock and time zone: the only place the service layer asks for either."""

from __future__ import annotations

import datetime as dt
import time


def local_zone() -> dt.tzinfo:
    """The machine's IANA zone (DST-aware), falling back to the current fixed offset."""
    try:
        import tzlocal

        return tzlocal.get_localzone()
    except Exception:
        return dt.datetime.now().astimezone().tzinfo or dt.UTC


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class SystemClock:
    """The service layer's `Clock` port: wall time for decisions, monotonic for throttles."""

    def wall(self) -> float:
        return time.time()

    def mono(self) -> float:
        return time.monotonic()
