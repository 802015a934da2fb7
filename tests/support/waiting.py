"""Waiting on real things with a deadline, never a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float = 15.0, interval: float = 0.05,
               message: str | Callable[[], str] = "") -> T:
    """Poll `predicate` until it returns something truthy; return it, or fail with `message`
    (a callable message is evaluated at the failure, so it can show the latest state)."""
    deadline = time.monotonic() + timeout
    last: T = predicate()
    while not last:
        if time.monotonic() > deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout}s: {text or predicate}")
        time.sleep(interval)
        last = predicate()
    return last
