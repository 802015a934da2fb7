"""Hosting the supervisor inside the tray app: its own thread, views out, commands in.

The supervisor (the same class `pitcrew watch` runs) lives on a worker thread and publishes
immutable `View`s; they reach the UI thread through a queued Qt signal. The UI sends the
typed `api.commands` records back with `command()`, which only puts them on
the supervisor's queue: the UI thread never waits on tmux, psutil, files or a checker.

When another supervisor (`pitcrew watch`) holds the lock, this app supervises nothing: it
shows that supervisor's own view, which the watcher publishes as a file (api/view_file.py),
read on a small thread of ours whenever it changed, and relays commands to it through the
command spool. When that supervisor stops, this app takes over.

Wake-ups (backoff retries, delivery retries, limit-reset resumes) are APScheduler jobs on a
Qt scheduler driven by the UI thread's event loop; the jobs only post events to the
supervisor's queue, and they are rebuilt from state.json on start.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from apscheduler.schedulers.qt import QtScheduler
from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from pitcrew.supervisor.adapters.notifier import Gate
from pitcrew.supervisor.api import view_file
from pitcrew.supervisor.api.commands import Command
from pitcrew.supervisor.api.view import View
from pitcrew.supervisor.service.app_context import AppContext
from pitcrew.supervisor.store import spool
from pitcrew.supervisor.store.lock import SupervisorLock

log = logging.getLogger("pitcrew")

RELAY_LOOK_EVERY = 0.25    # seconds: how often the relaying app looks at the published view
TAKE_OVER_EVERY = 2.0      # … and whether the other supervisor has stopped
STALE_AFTER = 20.0         # a view not refreshed this long is said to be old (it republishes
                           # every few seconds while it runs)


class _Poke(QObject):
    poke = Signal()
    halt = Signal()


class GuiScheduler(QtScheduler):  # type: ignore[misc]  # apscheduler ships no types
    """A QtScheduler that may be woken from any thread.

    APScheduler's own QtScheduler starts a `QTimer.singleShot` in `wakeup()`, which only works
    on the thread running the Qt loop (the supervisor adds jobs from its own thread), and it
    cannot stop a pending single shot under PySide6. One QTimer owned by the UI thread, poked
    through a queued signal, does both right.
    """

    def __init__(self, **options: Any) -> None:
        self._poker = _Poke()
        self._qtimer = QTimer(self._poker)
        self._qtimer.setSingleShot(True)
        self._qtimer.timeout.connect(self._process_jobs)
        self._poker.poke.connect(self._wake_on_gui, Qt.ConnectionType.QueuedConnection)
        self._poker.halt.connect(self._qtimer.stop, Qt.ConnectionType.QueuedConnection)
        super().__init__(**options)

    def _start_timer(self, wait_seconds: float | None) -> None:
        self._qtimer.stop()
        if wait_seconds is not None:
            self._qtimer.start(min(int(wait_seconds * 1000), 2_147_483_647))

    def _stop_timer(self) -> None:
        if QThread.currentThread() is self._qtimer.thread():
            self._qtimer.stop()
        else:
            self._poker.halt.emit()   # shutdown() from the supervisor's thread

    def wakeup(self) -> None:
        self._poker.poke.emit()

    @Slot()
    def _wake_on_gui(self) -> None:
        self._start_timer(0)


class SupervisorHost(QObject):
    """Runs one Supervisor on a worker thread for the UI."""

    view_changed = Signal(object)     # View, delivered on the UI thread
    problem = Signal(str)

    def __init__(self, ctx: AppContext, gate_factory: Callable[[], Gate],
                 environ: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.ctx = ctx
        self.gate_factory = gate_factory
        self.environ = environ
        self.latest = View()
        self.scheduler = GuiScheduler()
        self.lock = SupervisorLock(ctx.paths.data_dir / "supervisor.lock")
        self.holder: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sup: Any = None
        self._ready = threading.Event()
        self.view_changed.connect(self._remember)

    def start(self) -> bool:
        """False when another Pitcrew supervisor holds the lock (then this one shows that
        supervisor's view and relays commands to it through the command spool)."""
        holder = self.lock.acquire("pitcrew tray")
        if holder is not None:
            self.holder = holder.describe()
            self.problem.emit(f"another Pitcrew supervisor is running ({self.holder}); "
                              "this app shows its view and relays your changes to it")
            self.latest = View(relay=self.holder, status_line="Waiting for its view.")
            self.view_changed.emit(self.latest)
            self._thread = threading.Thread(target=self._relay, args=(holder.pid,),
                                            name="relay", daemon=True)
            self._thread.start()
            return False
        self._thread = threading.Thread(target=self._run, name="supervisor", daemon=True)
        self._thread.start()
        return True

    def _relay(self, holder_pid: int) -> None:
        """Show the holder's published view while it runs; take over once it stopped."""
        follower = view_file.Follower(self.ctx.paths.data_dir)
        relay = self.holder or ""
        next_try = fresh = time.monotonic()
        next_try += TAKE_OVER_EVERY
        shown: View | None = None
        while not self._stop.wait(RELAY_LOOK_EVERY):
            published = follower.changed()
            if published is not None and published.pid == holder_pid:
                shown, fresh = dataclasses.replace(published.view, relay=relay), time.monotonic()
                self.view_changed.emit(shown)
            elif shown is not None and time.monotonic() - fresh > STALE_AFTER:
                old = f"{relay} has not updated its view for {STALE_AFTER:.0f} s; it may be old"
                self.view_changed.emit(dataclasses.replace(shown, problems=(*shown.problems, old)))
                shown = None    # said once, until a fresh view comes
            if time.monotonic() < next_try:
                continue
            next_try = time.monotonic() + TAKE_OVER_EVERY
            if self.lock.acquire("pitcrew tray") is None:   # the other one is gone
                self.problem.emit(f"the other Pitcrew supervisor stopped ({relay}); "
                                  "this app supervises your agents now")
                self.holder = None
                self._run()
                return

    def _run(self) -> None:
        from pitcrew.supervisor.service.loop import Supervisor

        try:
            self._sup = Supervisor(self.ctx, self.gate_factory(), environ=self.environ,
                                   scheduler=self.scheduler, publish=self.view_changed.emit)
            self._ready.set()
            self._sup.run(self._stop)
        except Exception as exc:  # shown to the user, never a silent dead thread
            log.exception("the supervisor stopped")
            self.problem.emit(f"the supervisor stopped: {exc}")
        finally:
            self._ready.set()

    @Slot(object)
    def _remember(self, view: View) -> None:
        self.latest = view

    def command(self, command: Command) -> None:
        """Hand an `api.commands` record to the supervisor; never blocks."""
        sup = self._sup
        if sup is not None:
            sup.command(command)
            return
        # no supervisor of ours (another one holds the lock): it reads the command spool;
        # appending one line is the one small write the UI thread does
        spool.append(self.ctx.paths.data_dir / "commands.jsonl",
                     {**command.to_record(), "at": time.time()})

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._sup is not None:
            from pitcrew.supervisor.service.loop import Stop

            self._sup.post(Stop())
        if self._thread is not None:
            self._thread.join(timeout)
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        if self.holder is None:
            self.lock.release()
