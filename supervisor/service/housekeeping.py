"""What the loop does between events: the periodic housekeeping (`service/loop.py` runs it
after each event, or every HOUSEKEEPING_EVERY seconds while events keep coming).

In order: retry a data folder that refused a write (and then decide what was held back), the
fallback re-listing of panes, settings edited on disk, commands queued by `pitcrew send` & co.
and hook reports (both spools), the delivery sweep, reruns settling, the screens that changed
(the longest unread first, within READ_BUDGET while events wait) and each terminal's task
timeouts and loops (`service/watchdog.py`). Split out of the loop; like every part it gets the
parts and ports it uses, never the Supervisor.

While nothing counts time (`resting`: no task running, nothing typed waiting to start, no
screen to read, no incident, rerun or delivery open, every session with its control client,
every write through), the loop runs a pass every IDLE_TICK instead of every LOOP_TICK: those
passes were most of an idle fleet's CPU. Events (output, a pane or session opened, an exit,
a wake-up, a command from the tray app) still wake the loop at once; what only a pass sees —
a `pitcrew send` spooled, a hook report, settings edited on disk — waits up to IDLE_TICK.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from pitcrew.supervisor.api.commands import parse
from pitcrew.supervisor.service.autopilot import AutopilotService
from pitcrew.supervisor.service.deliveries import Deliveries
from pitcrew.supervisor.service.inbox import Inbox
from pitcrew.supervisor.service.observing import AT_REST, Observer
from pitcrew.supervisor.service.ports import Clock
from pitcrew.supervisor.service.reruns import Reruns
from pitcrew.supervisor.service.statebook import StateBook
from pitcrew.supervisor.service.watchdog import Watchdog
from pitcrew.supervisor.service.watched import Watched, is_ready
from pitcrew.supervisor.store.ledger import Ledger
from pitcrew.supervisor.store.spool import Spool

log = logging.getLogger("pitcrew")

READ_EVERY = 1.0        # seconds: at most one screen read per changing pane per second
READ_BUDGET = 0.1       # seconds of screen reads per pass while events wait
RESCAN_EVERY = 10.0     # seconds: fallback re-listing of panes (events cover the rest)
UNWATCHED_RESCAN_EVERY = 1.0   # … while no session exists, or one waits for its client
DELIVERY_SWEEP_EVERY = 5.0   # seconds: re-check deliveries even without a job
RECORD_RETRY_EVERY = 2.0  # seconds: retry a data folder that refused a write


IDLE_TICK = 1.0          # seconds between passes while `resting`


class Housekeeping:
    def __init__(self, clock: Clock, watched: Mapping[str, Watched],
                 events_waiting: Callable[[], bool], all_connected: Callable[[], bool],
                 last_rescan: Callable[[], float], rescan: Callable[[], None],
                 ledger: Ledger, book: StateBook, autopilot: AutopilotService, inbox: Inbox,
                 commands: Spool, commands_since: float | None, hooks: Spool,
                 deliveries: Deliveries, reruns: Reruns, observer: Observer,
                 watchdog: Watchdog) -> None:
        """`commands_since`: a first start skips queued commands older than this (wall time;
        None: all are read). `events_waiting`: whether the loop's queue holds events."""
        self.clock, self.watched, self.events_waiting = clock, watched, events_waiting
        self.all_connected, self.last_rescan, self.rescan = all_connected, last_rescan, rescan
        self.ledger, self.book, self.autopilot, self.inbox = ledger, book, autopilot, inbox
        self.commands, self.commands_since, self.hooks = commands, commands_since, hooks
        self.deliveries, self.reruns = deliveries, reruns
        self.observer, self.watchdog = observer, watchdog
        self.last_delivery_sweep = -1e9
        self.last_record_retry = -1e9
        self.rested = False     # `resting()` at the end of the last pass that ran through

    def catch_up(self, mono: float) -> None:
        """The data folder refused a write (full, read-only): try again; once both files take
        writes, decide what was held back meanwhile."""
        self.last_record_retry = mono
        if self.ledger.flush() and self.book.save() and \
                (held := self.autopilot.catch_up(self.watched)):
            log.info("caught up on %d observation(s) held while nothing could be recorded", held)

    def run(self) -> None:
        self.rested = False
        mono = self.clock.mono()
        if (self.autopilot.held or self.ledger.failing or self.book.failed) \
                and mono - self.last_record_retry > RECORD_RETRY_EVERY:
            self.catch_up(mono)
        since = mono - self.last_rescan()
        if since > RESCAN_EVERY or (not self.all_connected() and since > UNWATCHED_RESCAN_EVERY):
            self.rescan()   # no control client tells us of a session it is not attached to
        self.inbox.reload_settings()
        self.read_spools()
        if mono - self.last_delivery_sweep > DELIVERY_SWEEP_EVERY:
            self.last_delivery_sweep = mono   # a fallback: jobs wake each delivery on time
            self.deliveries.due_now()
        self.reruns.settle()
        self.read_screens(mono)
        for w in list(self.watched.values()):
            self.watchdog.check(w)        # the task timeouts (idle, soft, hard, not started)
            # and stuck loops
        self.rested = self.resting()    # the loop runs a pass after every event it handled

    def resting(self) -> bool:
        """Nothing here counts time or waits for a pass: see the module docstring."""
        if not self.all_connected() or self.autopilot.held or self.ledger.failing \
                or self.book.failed or self.reruns.pending or self.deliveries.open():
            return False
        return not any(w.state.task is not None or w.state.incident is not None or w.dirty
                       or w.delivered_at is not None for w in self.watched.values())

    def read_spools(self) -> None:
        """Commands queued by `pitcrew send` & co. (too old ones skipped at a first start)
        and hook reports."""
        for record in self.commands.new_records():
            if self.commands_since is not None and _float(record.get("at")) < \
                    self.commands_since:
                continue
            command = parse(record)
            if command is None:
                log.warning("ignoring a queued command Pitcrew does not know: %s",
                            sorted(record))
                continue
            self.inbox.apply(command)
        for record in self.hooks.new_records():
            self.inbox.apply_hook(record, self.autopilot.feed)

    def read_screens(self, mono: float) -> None:
        # screens to read, the longest unread first; with events waiting (a wake-up, an exit)
        # reading stops after READ_BUDGET and goes on at the next pass: 200 busy panes once
        # held a 0.05 s wait up for 15 s
        due = sorted((w for w in self.watched.values() if w.dirty and (
            w.screen is None or w.screen.state in AT_REST or mono - w.last_read >= READ_EVERY)),
            key=lambda w: w.last_read)
        for w in due:
            if self.clock.mono() - mono > READ_BUDGET and self.events_waiting():
                break
            was_ready = is_ready(w.screen)
            self.observer.screen(w)   # output after rest: read now, a prompt may start
            if not was_ready and is_ready(w.screen):
                self.deliveries.ready(w.key)   # a message waiting for it goes now


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
