"""The supervisor: gathers observations, asks the core, carries out what it decides.

One thread runs `Supervisor.run`, taking events from one queue: tmux control-mode clients
(output, panes appearing), the exit watcher (an agent process is gone), scheduled wake-ups,
hook reports and commands from `pitcrew autopilot …`. Between events it reads screens that
changed, reports tasks that went quiet, and every few seconds re-lists panes as a fallback.
`pitcrew watch` and the tray app run this same class.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import queue
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler

from pitcrew.supervisor.adapters import processes, sessions
from pitcrew.supervisor.adapters.clock import local_zone
from pitcrew.supervisor.adapters.control import ControlClient, ControlGone, Output, Topology
from pitcrew.supervisor.adapters.exits import ExitWatcher, ProcessGone
from pitcrew.supervisor.adapters.notifier import Gate
from pitcrew.supervisor.api.build import ViewCache, build_view
from pitcrew.supervisor.api.view import View
from pitcrew.supervisor.core.autopilot import decide, restore
from pitcrew.supervisor.core.policy import RestartPolicy
from pitcrew.supervisor.core.records import (
    Action,
    Observation,
    ProcessExited,
    PromptSubmitted,
    ScreenSeen,
    TaskFinished,
    Tick,
    WentQuiet,
)
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.core.seats import Seat
from pitcrew.supervisor.core.settings import Context, Mode
from pitcrew.supervisor.service.app_context import AppContext
from pitcrew.supervisor.service.deliveries import Deliveries
from pitcrew.supervisor.service.diagnoses import Diagnoses, DiagnosisDone
from pitcrew.supervisor.service.discovery import Discovery
from pitcrew.supervisor.service.effects import Executor
from pitcrew.supervisor.service.inbox import Inbox
from pitcrew.supervisor.service.seats import SeatBook
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store import state_store
from pitcrew.supervisor.store.ledger import Ledger
from pitcrew.supervisor.store.spool import Spool

log = logging.getLogger("pitcrew")

READ_EVERY = 1.0        # seconds: at most one screen read per changing pane per second
# An agent at rest waits for input: leaving rest means a prompt was sent; returning, done.
AT_REST = frozenset({ScreenState.IDLE, ScreenState.DRAFT})
RESCAN_EVERY = 10.0     # seconds: fallback re-listing of panes (events cover the rest)
LOOP_TICK = 0.25
DELIVERY_SWEEP_EVERY = 5.0   # seconds: re-check deliveries even without a job
PUBLISH_EVERY = 0.2     # seconds: at most five views a second for a UI
REPUBLISH_EVERY = 5.0   # … and one anyway now and then ("3 min ago" moves on)
COMMAND_MAX_AGE = 3600.0  # seconds: older queued commands are not replayed by a first start


@dataclass(frozen=True, slots=True)
class Wakeup:
    key: str


@dataclass(frozen=True, slots=True)
class Rescan:
    pane_id: str | None = None


class Stop:
    pass


@dataclass(frozen=True, slots=True)
class DeliveryDue:
    delivery_id: str


@dataclass(frozen=True, slots=True)
class Command:
    record: Mapping[str, Any]


class Supervisor:
    def __init__(self, app: AppContext, gate: Gate, environ: Mapping[str, str] | None = None,
                 clock: Callable[[], float] = time.time, scheduler: BaseScheduler | None = None,
                 publish: Callable[[View], None] | None = None) -> None:
        """`scheduler`: where wake-ups run (the tray app passes a QtScheduler; `pitcrew watch`
        a background one). `publish`: called on this thread with a fresh `View` whenever
        something a UI shows changed (at most every PUBLISH_EVERY seconds)."""
        env = os.environ if environ is None else environ
        self.app = app
        self.tmux = app.tmux
        self.gate = gate
        self.clock = clock
        self.rng = random.Random()
        self.events: queue.Queue[object] = queue.Queue()
        self.watched: dict[str, Watched] = {}
        self.ledger = Ledger(app.paths.ledger_file)
        self.off_for_launch = env.get("PITCREW_AUTOPILOT", "").strip().lower() == "off"
        scale = float(env.get("PITCREW_TEST_TIME_SCALE", "1") or 1)   # test-only: see README
        self.policy = RestartPolicy(time_scale=scale, quiet_after=app.config.quiet_after)
        loaded = state_store.load(app.paths.state_file)
        if loaded.problem:
            log.warning("%s", loaded.problem)
        self.snapshot = loaded.snapshot
        self.paused = loaded.snapshot.paused
        self.scheduler = scheduler or BackgroundScheduler(daemon=True)
        self.publish = publish
        self.problems: tuple[str, ...] = tuple(app.problems)
        self._changed = True
        self._published = 0.0
        self.view_cache = ViewCache()
        self.controls: dict[str, ControlClient] = {}
        self.exits = ExitWatcher(self.post)
        self.executor = Executor(self)
        self.deliveries = Deliveries(self, self.snapshot.extra.get("deliveries", ()))
        self.seats = SeatBook(self, self.snapshot.extra.get("seats"))
        self.diagnoses = Diagnoses(self)
        # commands queued while no supervisor ran (`pitcrew send`, `seat bind`, `launch`) are
        # for the next one: the first ever reads the spool from its start, skipping anything
        # too old to still be meant (a lost state.json must not replay old messages)
        offset = _int(self.snapshot.extra.get("commands_offset"))
        self.commands = Spool(app.paths.data_dir / "commands.jsonl",
                              offset=0 if offset is None else offset)
        self._commands_since = self.clock() - COMMAND_MAX_AGE if offset is None else None
        self.hooks = Spool(app.paths.data_dir / "hook-events.jsonl")
        self.inbox = Inbox(self)
        self.last_text = ""
        self.discovery = Discovery(self)
        self._last_delivery_sweep = -1e9

    # -- plumbing -------------------------------------------------------------------------

    def post(self, event: object) -> None:
        self.events.put(event)

    def command(self, record: Mapping[str, Any]) -> None:
        """From any thread (the UI's): a `supervisor.view` command, applied on ours."""
        self.events.put(Command(dict(record)))

    def changed(self) -> None:
        self._changed = True

    def maybe_publish(self, force: bool = False) -> None:
        if self.publish is None:
            return
        mono = time.monotonic()
        if not force and (mono - self._published < PUBLISH_EVERY
                          or (not self._changed and mono - self._published < REPUBLISH_EVERY)):
            return
        self._changed, self._published = False, mono
        try:
            self.publish(build_view(self))
        except Exception:  # a UI problem must never stop the supervisor
            log.exception("cannot publish a view")

    @property
    def server(self) -> str:
        return self.tmux.label

    def mode(self) -> Mode:
        if self.off_for_launch or not self.app.config.autopilot:
            return Mode.OFF
        return Mode.PAUSED if self.paused else Mode.ON

    def status_line(self) -> str:
        if self.off_for_launch:
            return "Off for this launch."
        mode = self.mode()
        if mode is Mode.OFF:
            return "Off."
        if mode is Mode.PAUSED:
            return "Paused"
        return ("Watching. Acts only when a running task goes quiet, its process exits, or a "
                "message to it stalls. Idle tabs are never checked.")

    def context_for(self, w: Watched) -> Context:
        p = w.provider
        return Context(
            mode=self.mode(), ask_to_continue=self.app.config.ask_to_continue,
            timer_mode=self.app.config.diagnosis_mode == "timer",
            resume_by_id=p.resume.by_id, resume_latest=p.resume.latest,
            continue_message=p.screen.continue_message, has_backup=self.seats.has_backup(w),
            policy=self.policy,
        )

    def seat_of(self, w: Watched) -> Seat | None:
        return self.seats.seat_of(w.key)

    def rescan_soon(self, pane_id: str) -> None:
        for delay in (0.3, 1.0, 2.5, 5.0):
            self.scheduler.add_job(self.post, "date", args=[Rescan(pane_id)],
                                   run_date=dt.datetime.now(dt.UTC)
                                   + dt.timedelta(seconds=delay))

    def feed(self, w: Watched, obs: Observation) -> tuple[Action, ...]:
        before = w.state
        w.state, actions = decide(w.state, obs, self.clock(), self.context_for(w), self.rng)
        for action in actions:
            self.executor.run(w, action)
        if w.state != before:
            self.persist()
        if actions or w.state != before:
            self.changed()
        return actions

    def persist(self) -> None:
        terminals = {k: w.state for k, w in self.watched.items()}
        for key, state in self.snapshot.terminals.items():
            terminals.setdefault(key, state)   # keep what is known about panes not seen now
        extra = {**self.snapshot.extra}
        if hasattr(self, "deliveries"):
            extra["deliveries"] = self.deliveries.to_json()
            extra["seats"] = self.seats.to_json()
            extra["commands_offset"] = self.commands.offset
        self.snapshot = state_store.Snapshot(terminals, self.paused, self.snapshot.consent,
                                             extra)
        try:
            state_store.save(self.app.paths.state_file, self.snapshot)
        except OSError as exc:
            log.error("cannot save %s: %s", self.app.paths.state_file, exc)

    # -- the loop -------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> int:
        log.info("Autopilot: %s", self.status_line())
        self.scheduler.start()
        self.exits.start()
        self.rescan()
        for w in self.watched.values():
            for action in restore(w.state, self.clock()):
                self.executor.run(w, action)
        try:
            while not stop.is_set():
                try:
                    event = self.events.get(timeout=LOOP_TICK)
                except queue.Empty:
                    event = None
                if isinstance(event, Stop):
                    break
                if event is not None:
                    self.handle(event)
                self.housekeeping()
                self.maybe_publish()
        finally:
            self.shutdown()
        return 0

    def shutdown(self) -> None:
        self.diagnoses.shutdown()
        for client in self.controls.values():
            client.stop()
        self.exits.stop()
        with contextlib.suppress(Exception):
            self.scheduler.shutdown(wait=False)
        self.persist()

    def handle(self, event: object) -> None:
        match event:
            case Output(pane_id=pane_id, at=at):
                w = self.watched.get(f"{self.server}:{pane_id}")
                if w is not None:
                    w.last_output, w.dirty, w.quiet_reported = at, True, False
                    wall = self.clock()
                    if wall - w.last_output_wall > REPUBLISH_EVERY:
                        self.changed()    # it woke up: show it now, not at the next republish
                    w.last_output_wall = wall
            case Topology() | Rescan(pane_id=None):
                self.rescan()
            case Rescan(pane_id=str(pane_id)):
                self.rescan_pane(pane_id)
            case ControlGone(session=session):
                self.controls.pop(session, None)
                self.rescan()
            case ProcessGone(key=key, pid=pid):
                self.process_gone(key, pid)
            case DiagnosisDone():
                self.diagnoses.done(event)
            case DeliveryDue(delivery_id=delivery_id):
                self.deliveries.tick(only=delivery_id)
            case Command(record=record):
                self.inbox.apply(record)
                self.maybe_publish(force=True)     # a click shows its effect at once
            case Wakeup(key=key):
                w = self.watched.get(key)
                if w is not None:
                    screen, alive = self.read_now(w)
                    inc = w.state.incident
                    active = None if inc is None else w.last_output_wall > inc.opened_at + 0.5
                    self.feed(w, Tick(screen, alive, active))

    def housekeeping(self) -> None:
        mono = time.monotonic()
        if mono - self.discovery.last_rescan > RESCAN_EVERY:
            self.rescan()
        self.inbox.reload_settings()
        for record in self.commands.new_records():
            if self._commands_since is not None and _float(record.get("at")) < \
                    self._commands_since:
                continue
            self.inbox.apply(record)
        for record in self.hooks.new_records():
            self.inbox.apply_hook(record)
        if mono - self._last_delivery_sweep > DELIVERY_SWEEP_EVERY:
            self._last_delivery_sweep = mono   # a fallback: jobs wake each delivery on time
            self.deliveries.tick()
        for w in list(self.watched.values()):
            at_rest = w.screen is None or w.screen.state in AT_REST
            if w.dirty and (at_rest or mono - w.last_read >= READ_EVERY):
                self.observe_screen(w)   # output after rest: read now, a prompt may be starting
            quiet_for = mono - w.last_output
            if (w.state.task is not None and not w.quiet_reported
                    and quiet_for >= self.policy.scaled(self.policy.quiet_after)):
                w.quiet_reported = True
                self.went_quiet(w, quiet_for)

    def rescan(self) -> None:
        self.discovery.rescan()

    def rescan_pane(self, pane_id: str) -> None:
        self.discovery.rescan_pane(pane_id)

    # -- observations ---------------------------------------------------------------------

    def read_now(self, w: Watched) -> tuple[Classification | None, bool]:
        pane = self.tmux.pane(w.pane_id)
        if pane is None:
            return None, False
        text = self.tmux.capture(w.pane_id, history=pane.height if pane.dead else 0)
        if text is None:
            return None, False
        self.last_text = text
        alive = (not pane.dead and w.agent_pid is not None
                 and processes.is_alive(w.agent_pid, w.agent_started))
        screen = w.read(text, dt.datetime.now(dt.UTC), local_zone())
        w.screen = screen
        w.last_read = time.monotonic()
        return screen, alive

    def observe_screen(self, w: Watched) -> None:
        before = w.screen.state if w.screen is not None else None
        screen, alive = self.read_now(w)
        w.dirty = False
        if screen is None:
            return
        now_state = screen.state
        if now_state is not before:
            w.note_state(now_state.value, self.clock())
            self.changed()
            log.info("%s: %s%s", w.key, now_state.value,
                     f" (was {before.value})" if before is not None else "")
        if not alive:
            self.feed(w, ScreenSeen(screen, alive))
            return   # a gone agent starts and finishes nothing; its exit is reported apart
        echoed = w.prompt_text(self.last_text)
        new_echo = bool(echoed) and w.last_echo is not None and not same_prompt(echoed,
                                                                                w.last_echo)
        w.last_echo = echoed
        started = now_state not in AT_REST and now_state is not ScreenState.UNKNOWN
        if new_echo and w.state.task is not None:
            # a new prompt was accepted, so the one before it has finished (a read in between
            # was missed): finish it first, then start the new one
            self.feed(w, TaskFinished(session_id=self.session_of(w)))
        if (new_echo or (started and (before is None or before in AT_REST))) \
                and w.state.task is None:
            by_us = w.is_own_prompt(echoed, time.monotonic())
            prompt = (w.typed_text if by_us else echoed) or "(a prompt)"
            if by_us:
                w.typed_text, w.typed_at = "", None
            self.feed(w, PromptSubmitted(prompt, by_pitcrew=by_us, session_id=self.session_of(w)))
        elif (now_state in AT_REST and w.state.task is not None
              and before is not None and before not in AT_REST):
            self.feed(w, TaskFinished(session_id=self.session_of(w)))
        self.feed(w, ScreenSeen(screen, alive))

    def went_quiet(self, w: Watched, quiet_for: float) -> None:
        """A running task stopped printing: With AI, a checker reads the screen first."""
        screen, alive = self.read_now(w)
        if not alive or screen is None:
            return
        config = self.app.config
        if config.diagnosis and config.diagnosis_mode == "ai" and screen.state in (
                ScreenState.BUSY, ScreenState.UNKNOWN, ScreenState.CONNECTION_LOST,
                ScreenState.RATE_LIMIT, ScreenState.LOGIN_REQUIRED):
            self.diagnoses.start(w, origin="quiet", quiet_for=quiet_for)
            return
        self.feed(w, WentQuiet(screen, quiet_for, confirmed_by="local classifier"))

    def session_of(self, w: Watched) -> str | None:
        env = processes.environ(w.agent_pid) if w.agent_pid else {}
        home = Path(env["HOME"]) if env.get("HOME") else None
        ref = sessions.find_session(w.provider.sessions, w.cwd, home=home, environ=env or None,
                                    newer_than=w.agent_started)
        return ref.session_id if ref else w.state.session_id

    def process_gone(self, key: str, pid: int) -> None:
        w = self.watched.get(key)
        if w is None or pid not in w.pid_generation:
            return
        generation = w.pid_generation[pid]
        pane = self.tmux.pane(w.pane_id)
        status = pane.dead_status if pane is not None and pane.dead else None
        signal = pane.dead_signal if pane is not None and pane.dead else None
        screen, _ = self.read_now(w)
        if w.agent_pid == pid:
            w.agent_pid = None
        log.info("%s: %s exited (status %s, signal %s)", key, w.provider.display_name,
                 status, signal)
        w.note_state("exited", self.clock())
        self.feed(w, ProcessExited(generation, status, signal, screen))

def same_prompt(a: str, b: str) -> bool:
    """Two readings of one echoed prompt (wrapping and cut-offs may differ between reads)."""
    a, b = " ".join(a.split()), " ".join(b.split())
    n = min(len(a), len(b), 60)
    return a[:n] == b[:n]


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and value >= 0 else None


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
