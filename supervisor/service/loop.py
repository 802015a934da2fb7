"""The supervisor loop: one queue, one thread, dispatch only.

Events arrive from tmux control-mode clients (output, panes appearing), the exit watcher (an
agent process is gone), scheduler jobs (a wait is over, a delivery is due, the Enter after a
typed line), diagnoses finishing, hook reports and commands. Between events the loop reads
screens that changed, checks running tasks against their timeouts and for loops
(`service/watchdog.py`), and every few seconds re-lists panes as a fallback
(`service/housekeeping.py`); a start picks up what state.json holds (`service/startup.py`).
`Supervisor` wires the parts together, each with the narrow ports it uses
(`service/ports.py`); `pitcrew watch` and the tray app run this same class.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler

from pitcrew.supervisor.adapters import processes, transcripts
from pitcrew.supervisor.adapters.clock import SystemClock, local_zone
from pitcrew.supervisor.adapters.control import ControlClient
from pitcrew.supervisor.adapters.exits import ExitWatcher
from pitcrew.supervisor.adapters.notifier import Gate
from pitcrew.supervisor.adapters.processes import LaunchStyle
from pitcrew.supervisor.adapters.scheduler import JobScheduler
from pitcrew.supervisor.adapters.ssh import control_dir
from pitcrew.supervisor.adapters.tmux_places import Places
from pitcrew.supervisor.api.build import ViewCache, build_view
from pitcrew.supervisor.api.commands import Command
from pitcrew.supervisor.api.view import View
from pitcrew.supervisor.core.errors import TmuxNotFound, TmuxTimeout
from pitcrew.supervisor.core.policy import RestartPolicy
from pitcrew.supervisor.core.records import Badge, Phase, Superseded
from pitcrew.supervisor.core.settings import Mode
from pitcrew.supervisor.service import deliveries as delivery_store
from pitcrew.supervisor.service import launches as launch_store
from pitcrew.supervisor.service import restoring
from pitcrew.supervisor.service.app_context import AppContext
from pitcrew.supervisor.service.autopilot import AutopilotService
from pitcrew.supervisor.service.control_sessions import ControlSessions
from pitcrew.supervisor.service.deliveries import Deliveries
from pitcrew.supervisor.service.diagnoses import Diagnoses
from pitcrew.supervisor.service.discovery import Discovery
from pitcrew.supervisor.service.effects import Effects
from pitcrew.supervisor.service.events import (
    Attached,
    CommandArrived,
    ControlGone,
    DeliveryDue,
    DiagnosisDone,
    Output,
    PressEnter,
    ProcessGone,
    Report,
    Rescan,
    Stop,
    Topology,
    Wakeup,
)
from pitcrew.supervisor.service.fleet import FleetKeeper
from pitcrew.supervisor.service.hosts import (
    HostEvent,
    HostGate,
    Hosts,
    RoutedReader,
    RoutedRelauncher,
    RoutedTmux,
)
from pitcrew.supervisor.service.housekeeping import IDLE_TICK, Housekeeping
from pitcrew.supervisor.service.identity import ServerWatch
from pitcrew.supervisor.service.inbox import Inbox
from pitcrew.supervisor.service.needs_you import NeedsYou
from pitcrew.supervisor.service.observing import Observer, session_file, session_of
from pitcrew.supervisor.service.ports import TmuxPort
from pitcrew.supervisor.service.remote_parts import RemoteParts
from pitcrew.supervisor.service.reruns import Reruns
from pitcrew.supervisor.service.seats import SeatBook
from pitcrew.supervisor.service.settings import Settings
from pitcrew.supervisor.service.startup import Startup
from pitcrew.supervisor.service.statebook import StateBook
from pitcrew.supervisor.service.waking import Waker
from pitcrew.supervisor.service.watchdog import Watchdog
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store import state_store
from pitcrew.supervisor.store.ledger import Ledger
from pitcrew.supervisor.store.spool import Spool

log = logging.getLogger("pitcrew")

HOUSEKEEPING_EVERY = 0.25   # … and such a pass at least this often while events keep coming
LOOP_TICK = 0.25        # seconds between passes with no event (IDLE_TICK while resting)
PUBLISH_EVERY = 0.2     # seconds: at most five views a second for a UI
REPUBLISH_EVERY = 5.0   # … and one anyway now and then ("3 min ago" moves on)
TMUX_RETRY = 2.0          # seconds: an event tmux did not answer for is tried again then
COMMAND_MAX_AGE = 3600.0  # seconds: older queued commands are not replayed by a first start

__all__ = ["Stop", "Supervisor"]


class Supervisor:
    def __init__(self, app: AppContext, gate: Gate, environ: Mapping[str, str] | None = None,
                 clock: SystemClock | None = None, scheduler: BaseScheduler | None = None,
                 publish: Callable[[View], None] | None = None) -> None:
        """`scheduler`: where wake-ups run (the tray app passes a QtScheduler; `pitcrew watch`
        a background one). `publish`: called on this thread with a fresh `View` whenever
        something a UI shows changed (at most every PUBLISH_EVERY seconds)."""
        env = os.environ if environ is None else environ
        self.app = app
        self.tmux = app.tmux
        self.gate = gate
        self.clock = clock or SystemClock()
        self.events: queue.Queue[object] = queue.Queue()
        self.watched: dict[str, Watched] = {}
        self.ledger = Ledger(app.paths.ledger_file)
        scale = float(env.get("PITCREW_TEST_TIME_SCALE", "1") or 1)   # test-only: see README
        self.settings = Settings(app.paths.config_file, app.config, other_problems=tuple(
            p for p in app.problems if not p.startswith(app.paths.config_file.name)),
            config_problems=tuple(p for p in app.problems
                                  if p.startswith(app.paths.config_file.name)))
        self.policy = RestartPolicy(time_scale=scale, quiet_after=app.config.quiet_after)
        loaded = state_store.load(app.paths.state_file)
        if loaded.problem:
            log.warning("%s", loaded.problem)
        self.book = StateBook(app.paths.state_file, loaded.snapshot,
                              lambda: {k: w.state for k, w in self.watched.items()})
        self.aps = scheduler or BackgroundScheduler(daemon=True)
        self.scheduler = JobScheduler(self.aps, self.post)
        self.publish = publish
        self._changed = True
        self._published = 0.0
        self.view_cache = ViewCache()
        self.sessions: ControlSessions[ControlClient] = ControlSessions(
            self._connect, self.clock.mono, self.clock.wall)
        self.exits = ExitWatcher(self.post)
        self.servers = ServerWatch(self.tmux)
        self._typed_ids: set[str] | None = None
        self._wire(off_for_launch=env.get("PITCREW_AUTOPILOT", "").strip().lower() == "off")
        # commands queued while no supervisor ran (`pitcrew send`, `seat bind`, `launch`) are
        # for the next one: the first ever reads the spool from its start, skipping anything
        # too old to still be meant (a lost state.json must not replay old messages)
        offset = _int(self.book.extra("commands_offset"))
        self.commands = Spool(app.paths.data_dir / "commands.jsonl",
                              offset=0 if offset is None else offset)
        self.book.parts.update(deliveries=self.deliveries.to_json, seats=self.seats.to_json,
                               commands_offset=lambda: self.commands.offset)
        self.hooks = Spool(app.paths.data_dir / "hook-events.jsonl")
        self.startup = Startup(str(app.paths.data_dir), self.watched, self.clock, self.ledger,
                               self.book, self.launches, lambda: self.server, self.rescan,
                               self.effects.finish_typed, self.autopilot.run,
                               self.deliveries.restore, self.observer.gone_while_away)
        self.housekeeper = Housekeeping(
            self.clock, self.watched, lambda: not self.events.empty(),
            self.all_connected, lambda: self.discovery.last_rescan, self.rescan,
            self.ledger, self.book, self.autopilot, self.inbox, self.commands,
            self.clock.wall() - COMMAND_MAX_AGE if offset is None else None, self.hooks,
            self.deliveries, self.reruns, self.observer, self.watchdog)
        self.book.parts["launch"] = self.startup.launch_json
        self.book.parts["reruns"] = self.reruns.to_json
        self.book.parts["typed"] = self.effects.typed_json
        self.book.parts["own_typing"] = self.startup.typing_json
        self.effects.persist = self.book.save
        self.autopilot.can_record = lambda: not self.ledger.failing
        self.fleet = FleetKeeper(app.paths.fleet_file, Places(self.tmux), self.tmux.list_panes,
                                 self.watched, self.clock.mono)   # for `pitcrew restore`
        self._tmux_trouble: str | None = None
        self._housekept = -1e9

    def _wire(self, off_for_launch: bool) -> None:
        """Each part gets the ports it uses, never this object."""
        app, clock, book = self.app, self.clock, self.book
        config = self.settings.current
        self.hosts = Hosts(app.config.hosts, control_dir(app.paths.runtime_dir)
                           if app.config.hosts else app.paths.runtime_dir, self.post,
                           self.changed, self.watched, clock.mono)
        # the tmux a terminal's own host runs: what acts on or asks about one terminal
        tmux: TmuxPort = RoutedTmux(self.tmux, self.hosts) if self.hosts.remotes else self.tmux
        self.routed = tmux
        gate = HostGate(self.gate, self.hosts) if self.hosts.remotes else self.gate
        self.reader = RoutedReader(tmux, clock, processes.is_alive, local_zone)
        self.reader.hosts = self.hosts
        self.relauncher = RoutedRelauncher(tmux, processes.stop_tree, processes.environ,
                                           processes.shell_at_prompt, processes.is_alive)
        self.relauncher.hosts = self.hosts
        self.effects = Effects(tmux, self.reader, self.scheduler, clock, self.ledger,
                               gate, self.relauncher, self.watched, self.post)
        self.relauncher.type_line = self.effects.type_line
        self.deliveries = Deliveries(self.watched, self.reader, self.effects, self.scheduler,
                                     clock, book.save, self.policy,
                                     delivery_store.load(book.extra("deliveries")).values(),
                                     self.typed_before)
        self.deliveries.reachable = self.hosts.is_up
        self.deliveries.pane_there = self.pane_there
        self.seats = SeatBook(lambda: config().seats, app.registry, tmux, clock,
                              self.ledger, gate, book.save,
                              lambda key, text: self.deliveries.queue(key, text, kind="brief"),
                              self.effects.look_again, book.extra("seats"),
                              relieve=lambda w, why: self.post(Report(w.key, Superseded(why))))
        self.autopilot = AutopilotService(clock, self.effects, book.save, self.changed, config,
                                          lambda: book.paused, self.seats.has_backup,
                                          self.policy, off_for_launch,
                                          seat_of=self.seats.seat_of)
        self.diagnoses = Diagnoses(self.watched, self.reader, self.post, clock, self.ledger,
                                   gate, config, app.registry, lambda: book.consent,
                                   self.autopilot.feed, self.seats.fail_over,
                                   self.deliveries.postpone, self.seats.seated, local_zone)
        self.effects.fail_over = self.seats.fail_over
        self.effects.diagnose = lambda w, failures: self.diagnoses.start(
            w, origin="delivery", failures=failures)
        self.observer = Observer(self.reader, clock, self.autopilot.feed, self.changed, config,
                                 lambda w, quiet_for: self.diagnoses.start(
                                     w, origin="quiet", quiet_for=quiet_for),
                                 tmux.pane, tmux.kill_pane, self.close_dead_pane,
                                 processes.shell_at_prompt,
                                 lambda key: key in self.effects.pending_enter,
                                 lambda w: self.hosts.session_of(
                                     w, lambda w: session_of(w, self.taken_by_others(w))))
        self.watchdog = Watchdog(clock, config, self.seats.seat_of, self.autopilot.feed,
                                 self.observer.went_quiet, self.diagnoses.start,
                                 lambda w: session_file(w, self.taken_by_others(w)),
                                 transcripts.read_steps, transcripts.size_of,
                                 scale=self.policy.time_scale)
        self.autopilot.task_started = self.watchdog.task_started
        self.launches = launch_store.load(book.extra("launch"))
        self.discovery = Discovery(self.tmux, clock, self.watched, self.active_providers,
                                   self.exits, self.autopilot.feed, book.saved,
                                   self.launches.get, lambda: self.servers.ident,
                                   self.sync_sessions, self.changed,
                                   self.observer.gone_while_confirming)
        self.reruns = Reruns(self.watched, tmux, clock, self.ledger, book.save,
                             self.relauncher,
                             lambda key, text: self.deliveries.queue(key, text, kind="rerun",
                                                                     wait=True),
                             self.agent_running,
                             lambda w, why: self.post(Report(w.key, Superseded(why))),
                             self.effects.look_again, book.extra("reruns"),
                             lambda key: any(d.terminal == key and d.kind == "rerun"
                                             for d in self.deliveries.open()))
        self.inbox = Inbox(self.watched, lambda: self.tmux.label, clock, self.settings, book,
                           self.autopilot, self.deliveries, self.seats, self.reruns,
                           self.changed)
        self.waker = Waker(self.watched, self.hosts, self.discovery, self.servers,
                           processes.is_alive, self.reader, self.autopilot.feed)
        self.needs_you = NeedsYou(clock, self.watched, gate, config,
                                  lambda: self.tmux.list_clients(),
                                  lambda key: self.hosts.host_of(key) is None, self.changed)
        self.hosts.build(RemoteParts(clock, self.watched, self.active_providers,
                                     self.autopilot.feed, book.saved, self.launches.get,
                                     self.hosts.sync_sessions, self.changed, self.observer))

    def agent_running(self, w: Watched) -> bool:
        """Asked of the agent's own host: a remote pid means nothing here. A host that
        cannot be reached counts as running (never replace what may still work)."""
        pane = self.routed.pane(w.pane_id)
        parts = self.hosts.parts_for(w.key, self.discovery, self.servers, processes.is_alive)
        alive = parts[2] if parts is not None else (lambda pid, started: True)
        return (pane is not None and not pane.dead and w.agent_pid is not None
                and alive(w.agent_pid, w.agent_started))

    def taken_by_others(self, w: Watched) -> frozenset[str]:
        """The sessions the other live agents of `w`'s CLI in its folder are known to own: a
        fact that leaves `w` the one session left (a rerun beside a running agent)."""
        return frozenset(o.state.session_id for o in self.watched.values()
                         if o is not w and o.agent_pid is not None and o.cwd == w.cwd
                         and o.provider.name == w.provider.name and o.state.session_id)

    def pane_there(self, key: str) -> bool:
        """Whether the terminal's pane is listed on its tmux server (no answer: assume so)."""
        try:
            return self.routed.pane(self.discovery.pane_of(key)) is not None
        except Exception:      # tmux hung or the link dropped: no answer is not "closed"
            return True

    def typed_before(self, delivery_id: str) -> bool:
        """Whether the ledger shows this message typed (read once: replays happen at start)."""
        if self._typed_ids is None:
            self._typed_ids = {str(d.readings.get("delivery_id")) for d in self.ledger.tail(5000)
                               if d.badge is Badge.TYPED}
        return delivery_id in self._typed_ids

    def close_dead_pane(self, w: Watched) -> bool:
        """Whether a pane Pitcrew kept on exit (the agent was its own command) now closes, as
        tmux would have closed it: after a normal exit, or with Autopilot off."""
        if w.launch is None or w.launch.style is not LaunchStyle.PANE or not w.kept_by_us:
            return False
        inc = w.state.incident
        return (self.autopilot.mode() is Mode.OFF or inc is None
                or inc.phase in (Phase.WATCHING, Phase.ASKING))

    # -- plumbing -------------------------------------------------------------------------

    def post(self, event: object) -> None:
        self.events.put(event)

    def command(self, command: Command) -> None:
        """From any thread (the UI's): an `api.commands` record, applied on ours."""
        self.events.put(CommandArrived(command))

    def changed(self) -> None:
        self._changed = True

    def active_providers(self) -> list[Any]:
        disabled = set(self.settings.current().disabled_providers)
        return [p for p in self.app.registry if p.name not in disabled]

    def _connect(self, session: str) -> ControlClient | None:
        client = ControlClient(self.tmux, session, self._heard)
        return client if client.start_client() else None

    def _heard(self, event: object) -> None:
        """A control client's event (on its own thread)."""
        if self.sessions.heard(event):
            self.post(event)

    def sync_sessions(self, sessions: Mapping[str, int]) -> set[str]:
        """One control-mode client per tmux session (service/control_sessions.py); returns
        the sessions still waiting for theirs."""
        return self.sessions.sync(sessions)

    def all_connected(self) -> bool:
        """Every session here and on every host has its control client; until then the
        loop lists panes every second."""
        return self.sessions.settled and self.hosts.settled

    def maybe_publish(self, force: bool = False) -> None:
        if self.publish is None:
            return
        mono = self.clock.mono()
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

    def status_line(self) -> str:
        return self.autopilot.status_line()

    def persist(self) -> None:
        self.book.save()

    def rescan(self) -> None:
        self.servers.refresh()
        self.discovery.rescan()
        self.hosts.rescan()

    # -- the loop -------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> int:
        log.info("Autopilot: %s", self.status_line())
        self.aps.start()
        self.exits.start()
        self.hosts.start()
        self.start()
        self.restore_at_start()
        try:
            while not stop.is_set():
                try:
                    event = self.events.get(timeout=IDLE_TICK if self.housekeeper.rested
                                            else LOOP_TICK)
                except queue.Empty:
                    event = None
                if isinstance(event, Stop):
                    break
                self.step(event)
                self.maybe_publish()
        finally:
            self.shutdown()
        return 0

    def step(self, event: object) -> None:
        """One event and the housekeeping after it. tmux hung or gone for a moment (an
        upgrade, a stuck server) costs this step, not the watcher: said once, the event is
        tried again shortly (a wake-up or an exit is never dropped), nothing known is
        forgotten."""
        try:
            if event is not None:
                self.handle(event)
            # events first (an exit, a wake-up): with more waiting, the housekeeping (screen
            # reads above all) runs only every HOUSEKEEPING_EVERY
            mono = self.clock.mono()
            if self.events.empty() or mono - self._housekept >= HOUSEKEEPING_EVERY:
                self._housekept = mono
                self.housekeeper.run()
                self.fleet.tick()
                self.needs_you.run()      # attention, and the needs-you notifications
        except (TmuxTimeout, TmuxNotFound) as exc:
            if self._tmux_trouble is None:
                log.error("%s; keeping what is known and trying again", exc)
            self._tmux_trouble = str(exc)
            if event is not None and not isinstance(event, Output | Topology):
                self.scheduler.at(self.clock.wall() + TMUX_RETRY, event)
            return
        if self._tmux_trouble is not None:
            log.warning("tmux answers again")
            self._tmux_trouble = None

    def start(self) -> None:
        """What a (re)start picks up (service/startup.py)."""
        self.startup.start()

    def restore_at_start(self) -> None:
        """Agents from before a restart of tmux that the server lacks: `[watch] restore`."""
        places = Places(self.tmux)
        restoring.at_start(
            self.settings.current().restore, self.fleet.from_before(), places,
            self.app.registry, lambda: restoring.Restorer(
                places, processes.shell_at_prompt, self.queue_continue, self.ledger,
                self.clock.wall, self.clock.mono, time.sleep, trigger="restore at start"))

    def queue_continue(self, key: str, text: str) -> None:
        """The continue for a restored mid-task agent: a delivery, typed once it is ready."""
        self.deliveries.queue(key, text, kind="restore", wait=True)

    def shutdown(self) -> None:
        self.effects.flush()
        self.diagnoses.shutdown()
        self.sessions.stop()
        self.hosts.stop()
        self.exits.stop()
        with contextlib.suppress(Exception):
            self.aps.shutdown(wait=False)
        self.persist()

    def handle(self, event: object) -> None:
        match event:
            case Output(pane_id=pane_id, at=at):
                w = self.watched.get(self.discovery.key(pane_id))
                if w is not None:
                    w.last_output, w.dirty, w.quiet_reported = at, True, False
                    wall = self.clock.wall()
                    if wall - w.last_output_wall > REPUBLISH_EVERY:
                        self.changed()    # it woke up: show it now, not at the next republish
                    w.last_output_wall = wall
            case Topology(pane_id=str(pane_id)) | Rescan(pane_id=str(pane_id)):
                self.discovery.rescan_pane(pane_id)
            case Topology() | Rescan(pane_id=None):
                self.rescan()
            case Attached(panes=panes):
                for pane_id in panes:     # what it printed before its client was attached
                    if (w := self.watched.get(self.discovery.key(pane_id))) is not None:
                        w.dirty = True
            case HostEvent():
                self.hosts.handle(event)
            case ControlGone(session=session):
                self.sessions.gone(session)
                self.rescan()
            case Report(key=key, observation=observation):
                if (w := self.watched.get(key)) is not None:
                    self.autopilot.feed(w, observation)
            case ProcessGone(key=key, pid=pid):
                w = self.watched.get(key)
                if w is not None and pid in w.pid_generation:
                    self.observer.exited(w, pid)
            case DiagnosisDone():
                self.diagnoses.done(event)
            case DeliveryDue(delivery_id=delivery_id):
                self.deliveries.due_now(only=delivery_id)
            case PressEnter():
                self.effects.press_enter(event)
            case CommandArrived(command=command):
                self.inbox.apply(command)
                self.maybe_publish(force=True)     # a click shows its effect at once
            case Wakeup(key=key):
                self.wake(key)

    def wake(self, key: str) -> None:
        """A wait is over: look again (service/waking.py)."""
        self.waker.wake(key)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and value >= 0 else None

