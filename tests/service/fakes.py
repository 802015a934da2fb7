"""In-memory fakes of the service layer's ports (`supervisor/service/ports.py`).

Everything here runs in microseconds: no tmux, no processes, no sleeps, no threads. Time moves
only when a test moves it (`FakeClock.advance`), scheduled jobs run only when a test asks
(`FakeScheduler.due`), and tmux is a dict of panes and screens that records every call
(`RecordingTmux`), so a test asserts on what a user would see: what was typed into which
pane, which ledger row was written, which notification was offered.

The screens below are what `tests/fake_agent/fakeagent` draws (its provider file,
`fakeagent.toml`, is loaded next to the shipped providers, as a user's file would be).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pitcrew import resources
from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.adapters.processes import ProcInfo
from pitcrew.supervisor.adapters.tmux import PaneInfo, ServerIdentity, TmuxResult
from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.core.plain_text import refusal
from pitcrew.supervisor.core.policy import RestartPolicy
from pitcrew.supervisor.core.records import Badge, Decision, Observation, TerminalState
from pitcrew.supervisor.core.records import Relaunch as RelaunchAction
from pitcrew.supervisor.providers.loader import Registry, load_registry
from pitcrew.supervisor.providers.model import Provider
from pitcrew.supervisor.service.app_context import AppContext
from pitcrew.supervisor.service.deliveries import Deliveries
from pitcrew.supervisor.service.effects import Effects
from pitcrew.supervisor.service.events import DeliveryDue, PressEnter
from pitcrew.supervisor.service.loop import Supervisor
from pitcrew.supervisor.service.reading import Reader
from pitcrew.supervisor.service.relaunching import Relauncher
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.config import Config
from pitcrew.supervisor.store.paths import resolve

FAKE_AGENT_DIR = Path(__file__).resolve().parent.parent / "fake_agent"
SERVER = "test"                   # RecordingTmux's label: keys are "test:%1"
T0 = 1_800_000_000.0              # a wall-clock start (2027-01-15); any fixed value does
AGENT_PID = 4242

# -- what fakeagent's screen shows ---------------------------------------------------------

BANNER = "FakeAgent 1.4.2 · model fake-1 · /work/api\nsession 0b7c\n"
IDLE = BANNER + "fake> "


def idle_after(prompt: str) -> str:
    """A prompt that ran and finished: its echo, the answer, an empty box."""
    return f"{BANNER}fake> {prompt}\n● Done: {prompt}\n\nfake> "


def busy(prompt: str) -> str:
    """The agent works on `prompt` (its echo above the spinner)."""
    return f"{BANNER}fake> {prompt}\n⠋ Working on \"{prompt}\"… (0s · esc to interrupt)"


def draft(text: str, before: str = IDLE) -> str:
    """`text` sits unsent in the input box."""
    return before + text


PERMISSION_MENU = (BANNER + "fake> question\n╭─ Bash command ─────────────────╮\n"
            "│ rm -rf build/                   │\n│ Do you want to proceed?         │\n"
            "│ ❯ 1. Yes                        │\n│   2. No                         │\n"
            "╰─────────────────────────────────╯")
LIMIT = (BANNER + "fake> limit\n⎿ Usage limit reached for fake-1 · resets 3pm\n"
         "  /upgrade to increase your usage limit.\nfake> ")
LOGIN = BANNER + "Not logged in. Select login method:\n ❯ 1. FakeAgent account\n   2. API key"
CONTINUE = (BANNER + "fake> x\n⚠ Connection lost while streaming. Send a message to continue.\n"
            "fake> ")


# -- time ------------------------------------------------------------------------------------


class FakeClock:
    """The `Clock` port. `now` is wall time (epoch seconds), `now_mono` monotonic; both settable
    directly, and `advance` moves both together, as real time does."""

    def __init__(self, wall: float = T0, mono: float = 1000.0) -> None:
        self.now = wall
        self.now_mono = mono

    def wall(self) -> float:
        return self.now

    def mono(self) -> float:
        return self.now_mono

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.now_mono += seconds

    def datetime(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.now, dt.UTC)


@dataclass(frozen=True, slots=True)
class Job:
    when: float
    event: object
    key: str | None


class FakeScheduler:
    """The `Scheduler` port: records jobs; a job with the key of a pending one replaces it
    (as `adapters/scheduler.py`'s APScheduler jobs do). `due(until)` pops the events due by
    then, oldest first.

    It also answers `add_job` like an APScheduler scheduler, so it can stand in for the one
    `Supervisor` wraps (`JobScheduler`), with `start`/`shutdown` doing nothing.
    """

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def at(self, when: float, event: object, key: str | None = None) -> None:
        if key is not None:
            self.jobs = [j for j in self.jobs if j.key != key]
        self.jobs.append(Job(when, event, key))

    def due(self, until: float) -> list[object]:
        ready = sorted((j for j in self.jobs if j.when <= until), key=lambda j: j.when)
        self.jobs = [j for j in self.jobs if j.when > until]
        return [j.event for j in ready]

    def job(self, key: str) -> Job | None:
        return next((j for j in self.jobs if j.key == key), None)

    def expect(self, key: str) -> Job:
        """The pending job with `key` (the test fails when there is none)."""
        job = self.job(key)
        assert job is not None, f"no job {key!r} in {self.jobs}"
        return job

    def events(self, kind: type) -> list[Any]:
        return [j.event for j in self.jobs if isinstance(j.event, kind)]

    # -- the APScheduler face (for Supervisor) -------------------------------------------------

    def add_job(self, func: Callable[..., object], trigger: str, run_date: dt.datetime,
                args: Sequence[object], id: str | None = None,
                **_: object) -> None:
        self.at(run_date.timestamp(), args[0], id)

    def start(self) -> None:
        pass

    def shutdown(self, wait: bool = True) -> None:
        pass


# -- tmux ------------------------------------------------------------------------------------


def make_pane(pane_id: str = "%1", session: str = "work", pid: int = AGENT_PID,
              dead: bool = False, command: str = "fakeagent", cwd: str = "/work/api",
              height: int = 40, **kw: Any) -> PaneInfo:
    values: dict[str, Any] = dict(
        pane_id=pane_id, session_name=session, window_index=1, window_name="agent",
        pane_index=int(pane_id.lstrip("%") or 0), pid=pid, dead=dead,
        dead_status=None, dead_signal=None, current_path=cwd, current_command=command,
        tty="/dev/pts/9", width=120, height=height, active=True, title="",
        start_command=command, start_path=cwd, cursor_x=6, cursor_y=height - 1,
        in_mode=False)
    names = {f.name for f in dataclasses.fields(PaneInfo)}
    return PaneInfo(**{k: v for k, v in {**values, **kw}.items() if k in names})


class RecordingTmux:
    """The `TmuxPort` over a dict of panes and their screens, recording every call.

    Tests set `screens[pane_id]` to what the agent shows; typing does not change a screen
    (the test decides what the agent does next). `typed` and `keys` are what reached each
    pane, in order; `captures` counts screen reads per pane. Put a method name in `fail` to
    make it raise `TmuxError` (a server or pane that went away).
    """

    def __init__(self, label: str = SERVER) -> None:
        self._label = label
        self.panes: dict[str, PaneInfo] = {}
        self.screens: dict[str, str] = {}
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.typed: list[tuple[str, str]] = []
        self.keys: list[tuple[str, tuple[str, ...]]] = []
        self.captures: Counter[str] = Counter()
        self.respawned: list[tuple[str, tuple[str, ...], str | None]] = []
        self.respawn_env: list[dict[str, str]] = []
        self.respawn_kill: list[bool] = []
        self.windows: list[dict[str, Any]] = []
        self.remain_on_exit: dict[str, bool] = {}
        self.fail: set[str] = set()
        self._next_pane = 100
        self.server_pid: int | None = 777

    @property
    def label(self) -> str:
        return self._label

    def add(self, pane_id: str = "%1", screen: str = IDLE, **kw: Any) -> PaneInfo:
        pane = make_pane(pane_id, **kw)
        self.panes[pane_id] = pane
        self.screens[pane_id] = screen
        return pane

    def close(self, pane_id: str) -> None:
        self.panes.pop(pane_id, None)
        self.screens.pop(pane_id, None)

    def _call(self, name: str, *args: Any) -> None:
        self.calls.append((name, args))
        if name in self.fail:
            raise TmuxError(f"{name}: can't find pane")

    # -- reads ---------------------------------------------------------------------------------

    def server_identity(self) -> ServerIdentity | None:
        """One server for the whole test (`server_pid` None: no server runs)."""
        self._call("server_identity")
        if self.server_pid is None:
            return None
        return ServerIdentity(f"/tmp/tmux-0/{self._label}", self.server_pid, int(T0) - 3600)

    def run(self, *args: str, path: str | None = None) -> TmuxResult:
        """Any other tmux command (window listings for the fleet record): nothing."""
        self._call("run", *args)
        return TmuxResult(tuple(args), 0, "", "")

    def list_panes(self, reap: bool = True) -> list[PaneInfo]:
        self._call("list_panes", reap)
        return list(self.panes.values())

    def pane(self, pane_id: str) -> PaneInfo | None:
        """The pane, its cursor where a terminal leaves it: after the screen's last text."""
        self._call("pane", pane_id)
        pane = self.panes.get(pane_id)
        screen = self.screens.get(pane_id)
        if pane is None or screen is None:
            return pane
        rows = screen.split("\n")
        return dataclasses.replace(pane, cursor_x=len(rows[-1]),
                                   cursor_y=pane.height - 1)

    def snapshot(self, pane_id: str) -> tuple[PaneInfo, str] | None:
        """As `pane` then `capture` (the real one reads both in one tmux command)."""
        pane = self.pane(pane_id)
        text = self.capture(pane_id) if pane is not None else None
        return None if pane is None or text is None else (pane, text)

    def capture(self, pane_id: str, history: int = 0) -> str | None:
        self._call("capture", pane_id, history)
        self.captures[pane_id] += 1
        if pane_id not in self.panes:
            return None
        return self.screens.get(pane_id, "")

    # -- writes --------------------------------------------------------------------------------

    def send_text(self, pane_id: str, text: str) -> None:
        self._call("send_text", pane_id, text)
        if (why := refusal(text)) is not None:     # as the real adapter: never typed
            raise TmuxError(why)
        self.typed.append((pane_id, text))

    def send_keys(self, pane_id: str, *keys: str) -> None:
        self._call("send_keys", pane_id, *keys)
        self.keys.append((pane_id, keys))

    def remains_on_exit(self, pane_id: str) -> bool | None:
        return self.remain_on_exit.get(pane_id, False) if pane_id in self.panes else None

    def set_remain_on_exit(self, pane_id: str, on: bool = True) -> None:
        self._call("set_remain_on_exit", pane_id, on)
        self.remain_on_exit[pane_id] = on

    def respawn(self, pane_id: str, argv: Sequence[str], cwd: str | None = None,
                env: Mapping[str, str] | None = None, kill: bool = False) -> None:
        self._call("respawn", pane_id, tuple(argv), cwd)
        self.respawned.append((pane_id, tuple(argv), cwd))
        self.respawn_env.append(dict(env or {}))
        self.respawn_kill.append(kill)

    def new_window(self, session: str, argv: Sequence[str], cwd: str, name: str | None = None,
                   env: dict[str, str] | None = None) -> str:
        self._call("new_window", session, tuple(argv), cwd, name)
        pane_id = f"%{self._next_pane}"
        self._next_pane += 1
        self.windows.append({"session": session, "argv": tuple(argv), "cwd": cwd,
                             "name": name, "env": env, "pane": pane_id})
        self.add(pane_id, screen="", session=session, cwd=cwd)
        return pane_id

    def list_clients(self) -> list[Any]:
        return []           # nobody attached: no pane is being looked at

    def kill_pane(self, pane_id: str) -> None:
        self._call("kill_pane", pane_id)
        self.close(pane_id)

    # -- what tests ask ------------------------------------------------------------------------

    def typed_into(self, pane_id: str = "%1") -> list[str]:
        return [text for p, text in self.typed if p == pane_id]

    def enters(self, pane_id: str = "%1") -> int:
        return sum(1 for p, keys in self.keys if p == pane_id and keys == ("Enter",))


# -- the ledger and the notification gate ----------------------------------------------------


class FakeLedger:
    def __init__(self) -> None:
        self.rows: list[Decision] = []

    def append(self, decision: Decision) -> None:
        self.rows.append(decision)

    @property
    def badges(self) -> list[Badge]:
        return [row.badge for row in self.rows]


class FakeGate:
    def __init__(self) -> None:
        self.messages: list[Message] = []

    def offer(self, msg: Message) -> bool:
        self.messages.append(msg)
        return True

    @property
    def titles(self) -> list[str]:
        return [m.title for m in self.messages]


class Counted:
    """A `Persist` / `Changed` port (or any no-argument callback) that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1


class Fed:
    """A `feed(w, observation)` port that keeps what it was fed."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Observation]] = []

    def __call__(self, w: Watched, obs: Observation) -> tuple[()]:
        self.items.append((w.key, obs))
        return ()

    @property
    def observations(self) -> list[Observation]:
        return [obs for _, obs in self.items]


# -- providers, terminals, the reader --------------------------------------------------------


@cache
def registry() -> Registry:
    """The shipped providers plus the fake agent's file, loaded the way the app loads them."""
    return load_registry(resources.providers_dir(), FAKE_AGENT_DIR)


def provider(name: str = "fakeagent") -> Provider:
    found = registry().get(name)
    assert found is not None, f"no provider {name!r}: {registry().errors}"
    return found


def make_watched(pane_id: str = "%1", provider_name: str = "fakeagent",
                 agent_pid: int | None = AGENT_PID, cwd: str = "/work/api",
                 session: str = "work", **state: Any) -> Watched:
    p = provider(provider_name)
    base = TerminalState(terminal=f"{session}:{pane_id}", agent=p.display_name, project=cwd)
    return Watched(f"{SERVER}:{pane_id}", pane_id, p,
                   dataclasses.replace(base, **state) if state else base, cwd,
                   agent_pid=agent_pid, agent_started=None if agent_pid is None else 1.0,
                   pid_generation={} if agent_pid is None else {agent_pid: 0})


class Processes:
    """Which agent pids run (the reader's `is_alive`, the relauncher's `stop_tree`)."""

    def __init__(self, alive: set[int] | None = None) -> None:
        self.alive = {AGENT_PID} if alive is None else alive
        self.stopped: list[int] = []
        self.env: dict[int, dict[str, str]] = {}
        self.busy_shells: set[int] = set()

    def is_alive(self, pid: int, create_time: float | None = None) -> bool:
        return pid in self.alive

    def stop_tree(self, pid: int) -> None:
        self.stopped.append(pid)
        self.alive.discard(pid)

    def environ(self, pid: int) -> dict[str, str]:
        return self.env.get(pid, {})

    def at_prompt(self, shell_pid: int, started: float | None = None) -> bool:
        """Whether a shell waits at its prompt (runs no program)."""
        return shell_pid not in self.busy_shells


def agent_process(pid: int = AGENT_PID, pane_pid: int = AGENT_PID,
                  name: str = "fakeagent") -> ProcInfo:
    return ProcInfo(pid, pane_pid, name, f"/opt/bin/{name}", (name,), "/work/api", 1.0, 0)


class FakeFinder:
    """The discovery's process walk (`find(pane_pid, providers)`): a pane runs the fake agent
    while its pid is in `procs.alive` (the agent is the pane's own process)."""

    def __init__(self, procs: Processes, provider_name: str = "fakeagent") -> None:
        self.procs = procs
        self.provider_name = provider_name

    def __call__(self, pane_pid: int, providers: list[Provider]
                 ) -> tuple[Provider, ProcInfo] | None:
        if pane_pid not in self.procs.alive:
            return None
        return provider(self.provider_name), agent_process(pane_pid, pane_pid, self.provider_name)


def make_reader(tmux: RecordingTmux, clock: FakeClock, procs: Processes | None = None) -> Reader:
    procs = procs or Processes()
    return Reader(tmux, clock, procs.is_alive, lambda: dt.UTC)


# -- a whole service layer below the loop, over the fakes ----------------------------------


@dataclass
class Rig:
    """Reader, effects executor and deliveries wired the way `Supervisor._wire` wires them, over
    fakes. `run_due()` plays the loop's part for the jobs that came due."""

    tmux: RecordingTmux = field(default_factory=RecordingTmux)
    clock: FakeClock = field(default_factory=FakeClock)
    scheduler: FakeScheduler = field(default_factory=FakeScheduler)
    ledger: FakeLedger = field(default_factory=FakeLedger)
    gate: FakeGate = field(default_factory=FakeGate)
    procs: Processes = field(default_factory=Processes)
    persist: Counted = field(default_factory=Counted)
    watched: dict[str, Watched] = field(default_factory=dict)
    policy: RestartPolicy = field(default_factory=RestartPolicy)
    diagnosed: list[tuple[str, int]] = field(default_factory=list)
    failed_over: list[tuple[str, str]] = field(default_factory=list)
    posted: list[object] = field(default_factory=list)     # events parts post to the loop

    def __post_init__(self) -> None:
        self.reader = make_reader(self.tmux, self.clock, self.procs)
        self.relauncher = Relauncher(self.tmux, self.procs.stop_tree, self.procs.environ,
                                     self.procs.at_prompt, self.procs.is_alive)
        self.effects = Effects(self.tmux, self.reader, self.scheduler, self.clock, self.ledger,
                               self.gate, self.relauncher, self.watched, self.posted.append)
        self.relauncher.type_line = self.effects.type_line
        self.effects.diagnose = lambda w, failures: self.diagnosed.append((w.key, failures))
        self.effects.fail_over = lambda w, reason: self.failed_over.append((w.key, reason))
        self.deliveries = Deliveries(self.watched, self.reader, self.effects, self.scheduler,
                                     self.clock, self.persist, self.policy)

    def terminal(self, pane_id: str = "%1", screen: str = IDLE, **state: Any) -> Watched:
        """An agent terminal in pane `pane_id` showing `screen`, watched."""
        self.tmux.add(pane_id, screen=screen)
        w = make_watched(pane_id, **state)
        self.watched[w.key] = w
        return w

    def run_due(self) -> list[object]:
        """Run the jobs due by now, as the loop would dispatch their events."""
        ran = self.scheduler.due(self.clock.wall())
        for event in ran:
            match event:
                case DeliveryDue(delivery_id=delivery_id):
                    self.deliveries.due_now(only=delivery_id)
                case PressEnter():
                    self.effects.press_enter(event)
        return ran

    def run_for(self, seconds: float, tick: float = 0.1) -> None:
        """Let `seconds` pass in `tick` steps, running what comes due at each."""
        wall, mono = self.clock.now, self.clock.now_mono
        steps = round(seconds / tick)
        for i in range(1, steps + 1):   # no drift: step i is exactly i * tick after the start
            self.clock.now, self.clock.now_mono = wall + i * tick, mono + i * tick
            self.run_due()


def relaunch(argv: tuple[str, ...] = ("fakeagent", "--continue"), generation: int = 1,
             kill_first: bool = False) -> RelaunchAction:
    return RelaunchAction(argv, generation, kill_first, None)


# -- the whole Supervisor over these fakes (the `lp` fixture, tests/service/conftest.py) ------


@dataclass
class Loop:
    sup: Supervisor
    tmux: RecordingTmux
    clock: FakeClock
    jobs: FakeScheduler
    gate: FakeGate

    def watch(self, pane_id: str = "%1", **state: Any) -> Watched:
        """A terminal the discovery would have found (that part runs real process walks)."""
        self.tmux.add(pane_id)
        w = make_watched(pane_id, **state)
        self.sup.watched[w.key] = w
        return w

    def run_due(self) -> None:
        for event in self.jobs.due(self.clock.wall()):
            self.sup.handle(event)

    def ledger(self) -> list[dict[str, object]]:
        path = self.sup.app.paths.ledger_file
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]


def loop_over_fakes() -> Loop:
    """`Supervisor` on a recording tmux, a fake clock and scheduler (PITCREW_HOME set by the
    caller). The process probes it wires itself (psutil) are replaced by fakes; no control-mode
    client is started for the sessions the discovery sees. Call `sup.shutdown()` after."""
    tmux, clock, jobs, gate = RecordingTmux(), FakeClock(), FakeScheduler(), FakeGate()
    app = AppContext(resolve(), Config(autopilot=True), registry(), tmux,  # type: ignore[arg-type]
                     ())
    sup = Supervisor(app, gate, environ={}, clock=clock, scheduler=jobs)  # type: ignore[arg-type]
    procs = Processes()
    sup.reader.is_alive = procs.is_alive
    sup.discovery.find = FakeFinder(procs)
    sup.discovery.capture = lambda proc, pane_pid, provider: None
    sup.discovery.is_alive = procs.is_alive
    sup.discovery.sync_sessions = lambda sessions: set()
    sup.exits.start()                 # its thread closes its wake-up pipe once stopped
    return Loop(sup, tmux, clock, jobs, gate)
