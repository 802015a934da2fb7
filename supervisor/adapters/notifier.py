"""The one notification gate, in front of the OS notifier.

Every "waiting on you" message from the headless watcher and the tray app goes through
`Gate.offer`: it drops repeats of the same key within `dedupe_for` seconds and anything while
snoozed, then hands the rest to its backends — a log line always, and a real desktop
notification (`DesktopBackend`) when this session can show one. A backend that fails never
raises into the supervisor.

Theory of operation (desktop notifications)
-------------------------------------------
desktop-notifier only runs button and click callbacks inside a running asyncio loop, so
`DesktopBackend` owns one: a daemon thread runs its own loop forever, and `__call__` only
schedules the send onto that loop (the caller never waits on D-Bus). A message that names a
terminal gets the buttons *Open terminal*, *Resume now* and *Snooze*, and a click on its body
counts too; each of them calls `on_action(action, msg)` with action "open", "resume",
"snooze" or "clicked" — **on the notifier's thread**, so a Qt caller must hop to its own
thread (a queued signal). An exception in `on_action` is logged, never raised.

With no session bus (Linux without DBUS_SESSION_BUS_ADDRESS), without desktop-notifier, or
when it cannot start, there is no desktop backend and the log line is all the user gets.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pitcrew.supervisor.core.redact import redact

log = logging.getLogger(__name__)

SNOOZE_SECONDS = 3600.0  # the Snooze button holds every notification for an hour


class Level(StrEnum):
    """How loudly to notify; maps onto the OS notifier's urgency."""

    LOW = "low"
    NORMAL = "normal"
    CRITICAL = "critical"


@dataclass(frozen=True, slots=True)
class Message:
    title: str
    body: str
    key: str                       # de-duplication key, e.g. "work:%3:login"
    terminal: str | None = None    # the terminal it is about (its key); adds the buttons
    level: Level = Level.NORMAL


Backend = Callable[[Message], None]
OnAction = Callable[[str, Message], None]
"""`on_action(action, msg)`: action is "open" | "resume" | "snooze" | "clicked"."""

ACTIONS = ("open", "resume", "snooze", "clicked")
BUTTONS = (("open", "Open terminal"), ("resume", "Resume now"), ("snooze", "Snooze"))


class Gate:
    def __init__(self, backends: list[Backend], dedupe_for: float = 900.0,
                 clock: Callable[[], float] | None = None) -> None:
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
        """Send `msg` unless it repeats a recent one or notifications are snoozed. Its title
        and body are redacted first: they may quote a prompt or an agent's last words, and a
        notification (and its log line) is a record, shown on a lock screen and kept by the
        daemon's history, like the ledger."""
        msg = dataclasses.replace(msg, title=redact(msg.title), body=redact(msg.body))
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


def session_can_notify(environ: dict[str, str] | None = None) -> bool:
    """False on Linux without a session bus: nothing could show a notification."""
    env = os.environ if environ is None else environ
    return not (sys.platform.startswith("linux") and not env.get("DBUS_SESSION_BUS_ADDRESS"))


class DesktopBackend:
    """Real OS notifications with buttons, sent from a private asyncio loop thread.

    `__call__` returns at once; `flush()` waits for what was scheduled (tests, and a
    watcher that is about to exit); `close()` stops the thread. Never raises.
    """

    def __init__(self, on_action: OnAction | None = None, app_name: str = "Pitcrew") -> None:
        from desktop_notifier import DesktopNotifier, Icon  # ImportError: caller degrades

        from pitcrew import resources

        self.on_action = on_action
        icon = resources.icons_dir() / "pitcrew-128.png"
        self._notifier = DesktopNotifier(app_name=app_name,
                                         app_icon=Icon(path=icon) if icon.is_file() else None)
        self._loop = asyncio.new_event_loop()
        self._pending: set[concurrent.futures.Future[None]] = set()
        self._pending_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="pitcrew-notify", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    def __call__(self, msg: Message) -> None:
        if self._loop.is_closed() or not self._thread.is_alive():
            log.warning("desktop notifier is stopped; not shown: %s", msg.title)
            return
        try:
            future = asyncio.run_coroutine_threadsafe(self._send(msg), self._loop)
        except RuntimeError as exc:  # loop closed between the check and the call
            log.warning("desktop notifier is stopped (%s); not shown: %s", exc, msg.title)
            return
        with self._pending_lock:
            self._pending.add(future)
        future.add_done_callback(self._done)

    def _done(self, future: concurrent.futures.Future[None]) -> None:
        with self._pending_lock:
            self._pending.discard(future)

    async def _send(self, msg: Message) -> None:
        from desktop_notifier import Button, Urgency

        dispatched = False

        def on_dispatched() -> None:
            nonlocal dispatched
            dispatched = True

        buttons: list[Any] = []
        on_clicked: Callable[[], None] | None = None
        if msg.terminal is not None:
            buttons = [Button(title=title, identifier=action,
                              on_pressed=self._callback(action, msg))
                       for action, title in BUTTONS]
            on_clicked = self._callback("clicked", msg)
        try:
            await self._notifier.send(
                title=msg.title, message=msg.body, urgency=Urgency(msg.level.value),
                buttons=buttons, on_clicked=on_clicked, on_dispatched=on_dispatched,
            )
        except Exception as exc:  # desktop-notifier logs and swallows most failures itself
            log.warning("desktop notification failed: %s", exc)
            return
        if not dispatched:
            log.warning("desktop notification not shown (see the log above): %s", msg.title)

    def _callback(self, action: str, msg: Message) -> Callable[[], None]:
        def fire() -> None:
            log.info("notification action %s: %s", action, msg.title,
                     extra={"pitcrew_action": action, "pitcrew_terminal": msg.terminal})
            if self.on_action is None:
                return
            try:
                self.on_action(action, msg)
            except Exception:  # the caller's handler must not kill the notifier thread
                log.exception("notification action %s failed", action)

        return fire

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every scheduled notification was handed to the OS; False on timeout."""
        with self._pending_lock:
            pending = list(self._pending)
        _, not_done = concurrent.futures.wait(pending, timeout=timeout)
        return not not_done

    def close(self) -> None:
        """Drop the bus connection and stop the thread (buttons stop working)."""
        if self._loop.is_closed() or not self._thread.is_alive():
            return
        bus = getattr(getattr(self._notifier, "_backend", None), "bus", None)  # dbus-fast

        async def hang_up() -> None:
            if bus is not None:
                bus.disconnect()
                await asyncio.wait_for(bus.wait_for_disconnect(), 5)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(hang_up(), self._loop).result(6)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


def desktop_backend(on_action: OnAction | None = None) -> DesktopBackend | None:
    """Real desktop notifications when this session can show them, else None."""
    if not session_can_notify():
        return None
    try:
        return DesktopBackend(on_action)
    except Exception as exc:  # ImportError, or a notifier that cannot start here
        log.warning("desktop notifications are off: %s", exc)
        return None


def default_gate(on_action: OnAction | None = None) -> Gate:
    """The log line, plus desktop notifications when possible. The Snooze button snoozes
    this gate for `SNOOZE_SECONDS` before `on_action` hears of it."""
    backends: list[Backend] = [log_backend]
    gate = Gate(backends)

    def act(action: str, msg: Message) -> None:
        if action == "snooze":
            gate.snooze(SNOOZE_SECONDS)
        if on_action is not None:
            on_action(action, msg)

    desktop = desktop_backend(act)
    if desktop is not None:
        backends.append(desktop)
    return gate
