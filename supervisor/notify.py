"""The one notification gate, in front of the OS notifier.

Every "waiting on you" message from the headless watcher and the tray app goes through
`Gate.offer`: it drops repeats of the same key within `dedupe_for` seconds and anything while
snoozed, then hands the rest to a backend — desktop-notifier when a session bus is there, a
log line always. A backend that fails never raises into the supervisor.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Message:
    title: str
    body: str
    key: str                       # de-duplication key, e.g. "work:%3:login"
    terminal: str | None = None


Backend = Callable[[Message], None]


class Gate:
    def __init__(self, backends: list[Backend], dedupe_for: float = 900.0,
                 clock: Callable[[], float] | None = None) -> None:
        import time

        self.backends = backends
        self.dedupe_for = dedupe_for
        self.clock = clock or time.monotonic
        self._sent: dict[str, float] = {}
        self._snoozed_until = 0.0
        self._lock = threading.Lock()

    def snooze(self, seconds: float) -> None:
        with self._lock:
            self._snoozed_until = self.clock() + seconds

    def offer(self, msg: Message) -> bool:
        """Send `msg` unless it repeats a recent one or notifications are snoozed."""
        now = self.clock()
        with self._lock:
            if now < self._snoozed_until:
                log.info("notification snoozed: %s", msg.title)
                return False
            last = self._sent.get(msg.key)
            if last is not None and now - last < self.dedupe_for:
                return False
            self._sent[msg.key] = now
        for backend in self.backends:
            try:
                backend(msg)
            except Exception as exc:  # a notifier must never stop the supervisor
                log.warning("notification backend failed: %s", exc)
        return True


def log_backend(msg: Message) -> None:
    log.warning("needs you: %s — %s", msg.title, msg.body)


def desktop_backend() -> Backend | None:
    """desktop-notifier when this session can show notifications, else None."""
    if sys.platform.startswith("linux") and not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return None
    try:
        from desktop_notifier import DesktopNotifierSync
    except ImportError:
        return None
    notifier = DesktopNotifierSync(app_name="Pitcrew")

    def send(msg: Message) -> None:
        notifier.send(title=msg.title, message=msg.body)

    return send


def default_gate() -> Gate:
    backends: list[Backend] = [log_backend]
    desktop = desktop_backend()
    if desktop is not None:
        backends.append(desktop)
    return Gate(backends)
