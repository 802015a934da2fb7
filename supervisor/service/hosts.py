"""Remote hosts in the loop: each one's link, discovery, reader and relauncher.

A remote host's terminals live in the same `watched` table as local ones, keyed
`<host>:<pane>` (`gpu1:%3`), and its pane ids carry the host too, so the parts that take a
pane id (the effects executor typing, the observer, seats) reach the right tmux through
`RoutedTmux`, and the parts that take a terminal (`RoutedReader`, `RoutedRelauncher`) use
the host's own process reads. Everything for a host arrives on the loop's queue as a
`HostEvent` and is handled here, on the loop's thread.

A host that is down is left alone: its terminals stay as they were (their incidents are
kept, nothing is read or typed), nothing is re-listed until the link is up again, and the
first thing done then is a full look, so an agent that exited while the link was down is
reported once the link is back.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pitcrew.supervisor.adapters.control import ControlGone, Topology
from pitcrew.supervisor.adapters.exits import ProcessGone
from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.adapters.remote_procs import RemoteExits, RemoteProcs
from pitcrew.supervisor.adapters.remote_sessions import RemoteSessions
from pitcrew.supervisor.adapters.ssh import RemoteControlClient, RemoteTmux, SshLink
from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.core.hosts import LOCAL, Host, HostState
from pitcrew.supervisor.core.records import Relaunch
from pitcrew.supervisor.core.timeouts import Timeout
from pitcrew.supervisor.service.control_sessions import ControlSessions
from pitcrew.supervisor.service.discovery import Discovery
from pitcrew.supervisor.service.events import Wakeup
from pitcrew.supervisor.service.identity import ServerWatch
from pitcrew.supervisor.service.ports import NotifyPort, Post, TmuxPort
from pitcrew.supervisor.service.reading import Reader, Reading
from pitcrew.supervisor.service.relaunching import Relauncher, Result
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")


@dataclass(frozen=True, slots=True)
class HostEvent:
    """Something about one remote host: its link changed state (`event` is a HostState
    value), or its control clients said so (Topology, ControlGone)."""

    host: str
    event: object
    why: str = ""


@dataclass
class Remote:
    host: Host
    link: SshLink
    tmux: RemoteTmux
    procs: RemoteProcs
    exits: RemoteExits
    sessions: RemoteSessions
    servers: ServerWatch
    controls: ControlSessions[RemoteControlClient]
    discovery: Discovery | None = None
    reader: Reader | None = None
    relauncher: Relauncher | None = None


RESCAN_EVERY = 10.0     # seconds: fallback re-listing of a host (events cover the rest)
WAITING_RESCAN_EVERY = 1.0   # … while a session waits for its control client
Build = Callable[[Remote], tuple[Discovery, Reader, Relauncher]]


class Hosts:
    def __init__(self, hosts: Iterable[Host], control: Path, post: Post,
                 changed: Callable[[], None], watched: dict[str, Watched] | None = None,
                 mono: Callable[[], float] | None = None) -> None:
        self.watched = watched if watched is not None else {}
        self.mono = mono or (lambda: 0.0)
        self.post = post
        self.changed = changed
        self.remotes: dict[str, Remote] = {}
        self.looked: dict[str, float] = {}       # host → when it was last listed (monotonic)
        for host in hosts:
            if not host.enabled:
                continue
            link = SshLink(host, control, self._link_changed(host.name))
            tmux = RemoteTmux(link)
            # that host's clock is not ours: a session is young by when it was first listed
            controls = ControlSessions(self._connector(host.name, tmux), self.mono,
                                       lambda: 0.0, trust_created=False)
            self.remotes[host.name] = Remote(host, link, tmux, RemoteProcs(link), RemoteExits(),
                                             RemoteSessions(link), ServerWatch(tmux), controls)

    def _link_changed(self, name: str) -> Callable[[str, str], None]:
        return lambda state, why: self.post(HostEvent(name, state, why))

    def build(self, make: Build) -> None:
        for remote in self.remotes.values():
            remote.discovery, remote.reader, remote.relauncher = make(remote)

    def host_of(self, key_or_pane: str) -> Remote | None:
        return self.remotes.get(key_or_pane.split(":", 1)[0]) if ":" in key_or_pane else None

    def states(self) -> dict[str, str]:
        return {name: r.link.state for name, r in self.remotes.items()}

    def start(self) -> None:
        for remote in self.remotes.values():
            remote.link.start()

    def stop(self) -> None:
        for remote in self.remotes.values():
            remote.controls.stop()
            remote.link.stop()

    # -- on the loop's thread -------------------------------------------------------------

    def handle(self, event: HostEvent) -> None:
        remote = self.remotes.get(event.host)
        if remote is None:
            return
        match event.event:
            case HostState.UP:
                self.changed()
                self._unseen(remote, False)
                self.rescan_host(remote)
                for key, w in self.watched.items():   # waits that fell due while it was down
                    if key.startswith(f"{remote.host.name}:") and w.state.incident is not None:
                        self.post(Wakeup(key))
            case HostState.DOWN | HostState.CONNECTING:
                self.changed()
                self._unseen(remote, True)
                remote.controls.stop()
            case Topology(pane_id=str(pane_id)):
                self._guarded(remote, lambda: self._pane_changed(remote, pane_id))
            case Topology():
                self.rescan_host(remote)
            case ControlGone(session=session):
                remote.controls.gone(session)
                self.rescan_host(remote)

    def _unseen(self, remote: Remote, down: bool) -> None:
        """A host we cannot see is not quiet: no quiet check while it is down, and its
        quiet time counts again from when it is back."""
        prefix = f"{remote.host.name}:"
        for key, w in self.watched.items():
            if key.startswith(prefix):
                w.quiet_reported = down
                if down:
                    w.fired.add(Timeout.IDLE.value)     # nor the watchdog's idle timeout
                else:
                    w.last_output = w.last_progress = self.mono()
                    w.fired.discard(Timeout.IDLE.value)

    def rescan(self) -> None:
        """The fallback look at every host that is up, at most every RESCAN_EVERY seconds,
        or every second while one of its sessions waits for its control client (the loop
        asks every second then, and while no local tmux server runs)."""
        now = self.mono()
        for name, remote in self.remotes.items():
            every = WAITING_RESCAN_EVERY if remote.controls.waiting else RESCAN_EVERY
            if now - self.looked.get(name, -1e9) >= every:
                self.rescan_host(remote, full=False)

    @property
    def settled(self) -> bool:
        """No session on a host that is up waits for its control client."""
        return not any(r.controls.waiting for r in self.remotes.values()
                       if r.link.state == HostState.UP)

    def rescan_host(self, remote: Remote, full: bool = True) -> None:
        """List the host's panes. `full`: take a process listing first (after the link came
        back, or tmux said something changed); the fallback takes one only when a pane
        changed, so an idle host costs two tmux calls every RESCAN_EVERY seconds."""
        self.looked[remote.host.name] = self.mono()
        self._guarded(remote, lambda: self._rescan(remote, full))

    def _guarded(self, remote: Remote, work: Callable[[], None]) -> None:
        if remote.link.state != HostState.UP or remote.discovery is None:
            return          # down: keep what we know, look again when it is back
        try:
            work()
        except TmuxError as exc:   # the link dropped mid-look: its state event follows
            log.info("%s", exc)

    def _rescan(self, remote: Remote, full: bool = True) -> None:
        assert remote.discovery is not None
        before = dict(remote.discovery.seen)
        if full:
            self._exits(remote)
        remote.servers.refresh()
        if remote.link.state == HostState.UP:
            remote.discovery.rescan()
        if not full and remote.discovery.seen != before:
            self._exits(remote)

    def _pane_changed(self, remote: Remote, pane_id: str) -> None:
        assert remote.discovery is not None
        self._exits(remote)
        remote.discovery.rescan_pane(pane_id)

    def _exits(self, remote: Remote) -> None:
        procs = remote.procs.refresh()
        if remote.link.state != HostState.UP or not procs:
            raise TmuxError("no process listing")
        for key, pid in remote.exits.check(procs):
            self.post(ProcessGone(key, pid))

    def is_up(self, key: str) -> bool:
        """Whether the host of this terminal can be reached now (a local one always)."""
        remote = self.host_of(key)
        return remote is None or remote.link.state == HostState.UP

    def parts_for(self, key: str, discovery: Discovery, servers: ServerWatch,
                  alive: Callable[[int, float | None], bool]
                  ) -> tuple[Discovery, ServerWatch, Callable[[int, float | None], bool]] | None:
        """The discovery, server watch and liveness check for this terminal's host (the
        local ones given for a local terminal); None while its host is down."""
        remote = self.host_of(key)
        if remote is None or remote.discovery is None:
            return discovery, servers, alive
        if remote.link.state != HostState.UP:
            return None
        return remote.discovery, remote.servers, remote.procs.is_alive

    def session_of(self, w: Watched, local: Callable[[Watched], str | None]) -> str | None:
        """The agent's session id from the CLI's files on the terminal's own host."""
        remote = self.host_of(w.key)
        if remote is None:
            return local(w)
        env: dict[str, str] = {}
        if w.agent_pid and remote.link.state == HostState.UP:
            try:
                env = remote.procs.environ(w.agent_pid)
            except TmuxError:
                env = {}
        if not env and w.launch is not None:
            env = dict(w.launch.env)
        if remote.link.state != HostState.UP or not w.cwd:
            return w.state.session_id
        ref = remote.sessions.find_session(w.provider.sessions, w.cwd, env, w.agent_started)
        return ref.session_id if ref else w.state.session_id

    def sync_sessions(self, remote: Remote, sessions: Mapping[str, int]) -> set[str]:
        return remote.controls.sync(sessions)

    def _connector(self, name: str, tmux: RemoteTmux
                   ) -> Callable[[str], RemoteControlClient | None]:
        def connect(session: str) -> RemoteControlClient | None:
            client = RemoteControlClient(tmux, session, self._control_event(name))
            return client if client.start_client() else None
        return connect

    def _control_event(self, name: str) -> Callable[[object], None]:
        def emit(event: object) -> None:
            if not self.remotes[name].controls.heard(event):
                return
            if isinstance(event, Topology | ControlGone):
                self.post(HostEvent(name, event))
            else:
                self.post(event)      # Output, Attached: already with the host's pane ids
        return emit


class RoutedTmux:
    """The tmux a pane id belongs to: `gpu1:%3` → gpu1's, anything else → the local one."""

    def __init__(self, local: TmuxPort, hosts: Hosts) -> None:
        self.local = local
        self.hosts = hosts

    def _for(self, pane_id: str) -> TmuxPort:
        remote = self.hosts.host_of(pane_id)
        return remote.tmux if remote is not None else self.local

    @property
    def label(self) -> str:
        return self.local.label

    def list_panes(self, reap: bool = True) -> list[PaneInfo]:
        return self.local.list_panes(reap)

    def pane(self, pane_id: str) -> PaneInfo | None:
        return self._for(pane_id).pane(pane_id)

    def capture(self, pane_id: str, history: int = 0) -> str | None:
        return self._for(pane_id).capture(pane_id, history)

    def snapshot(self, pane_id: str) -> tuple[PaneInfo, str] | None:
        return self._for(pane_id).snapshot(pane_id)

    def send_text(self, pane_id: str, text: str) -> None:
        self._for(pane_id).send_text(pane_id, text)

    def send_keys(self, pane_id: str, *keys: str) -> None:
        self._for(pane_id).send_keys(pane_id, *keys)

    def remains_on_exit(self, pane_id: str) -> bool | None:
        return self._for(pane_id).remains_on_exit(pane_id)

    def set_remain_on_exit(self, pane_id: str, on: bool = True) -> None:
        self._for(pane_id).set_remain_on_exit(pane_id, on)

    def respawn(self, pane_id: str, argv: Sequence[str], cwd: str | None = None,
                env: Mapping[str, str] | None = None, kill: bool = False) -> None:
        self._for(pane_id).respawn(pane_id, argv, cwd, env, kill)

    def new_window(self, session: str, argv: Sequence[str], cwd: str, name: str | None = None,
                   env: dict[str, str] | None = None) -> str:
        """`gpu1:work` opens the window in session `work` on gpu1."""
        host, sep, rest = session.partition(":")
        remote = self.hosts.remotes.get(host) if sep else None
        if remote is not None:
            return remote.tmux.new_window(rest, argv, cwd, name, env)
        return self.local.new_window(session, argv, cwd, name, env)

    def kill_pane(self, pane_id: str) -> None:
        self._for(pane_id).kill_pane(pane_id)


class RoutedReader(Reader):
    """Reads a remote terminal with its host's reader; while the host is down, the last
    reading stands (no news is not a closed pane)."""

    hosts: Hosts

    def read(self, w: Watched) -> Reading:
        remote = self.hosts.host_of(w.key)
        if remote is None or remote.reader is None:
            return super().read(w)
        if remote.link.state == HostState.UP:
            try:
                reading = remote.reader.read(w)
                self.reads += 1
                return reading
            except TmuxError as exc:
                log.info("%s: cannot read the screen: %s", w.key, exc)
        return Reading(w.screen, w.last_alive, w.last_text, w.last_cursor)


class RoutedRelauncher(Relauncher):
    """Relaunches a remote terminal with its host's tmux and processes."""

    hosts: Hosts

    def relaunch(self, w: Watched, action: Relaunch) -> Result:
        remote = self.hosts.host_of(w.key)
        if remote is None or remote.relauncher is None:
            return super().relaunch(w, action)
        remote.relauncher.type_line = self.type_line
        return remote.relauncher.relaunch(w, action)


class HostGate:
    """The notification gate, with a remote terminal's host in front of its title
    ("gpu1 · api: usage limit"); local notifications pass unchanged."""

    def __init__(self, gate: NotifyPort, hosts: Hosts) -> None:
        self.gate = gate
        self.hosts = hosts

    def offer(self, msg: Message) -> bool:
        remote = self.hosts.host_of(msg.terminal) if msg.terminal else None
        if remote is not None:
            msg = dataclasses.replace(msg, title=f"{remote.host.name} · {msg.title}")
        return self.gate.offer(msg)


def host_name(key: str, hosts: Hosts) -> str:
    remote = hosts.host_of(key)
    return remote.host.name if remote is not None else LOCAL
