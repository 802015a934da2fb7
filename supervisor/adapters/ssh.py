"""One ssh connection per remote host, and tmux run through it.

Contract
--------
* `SshLink` keeps one OpenSSH master connection per host (`ssh -M -N`, ControlMaster with a
  socket in a private 0700 control dir): every command, capture, keystroke and control-mode
  client for that host runs over it (`-o ControlPath=<socket> -o ControlMaster=no`), so
  watching a host costs one TCP connection and one authentication, not one per call. The
  short commands go to one long-lived remote `sh` (adapters/remote_shell.py), so the remote
  login shell and its rc files run once per connection, not once per command.
* It is non-interactive: `BatchMode=yes` (never a password prompt), `ConnectTimeout`, and
  `ServerAliveInterval` so a dead link is noticed within seconds.
* Its state is `connecting`, `up` or `down`; a drop is noticed when the master process exits
  and is reconnected at once (after the first backoff step), failed attempts back off (1, 2,
  4 … 60 s). A command while the host is not up raises `HostDown` at once, without trying to
  connect: a host that is down is one state, one log line when it goes down and one when it
  is back, never an error storm (nor a line per attempt).
* `RemoteTmux` is `adapters.tmux.Tmux` with its `run` going through the link. Its pane ids
  carry the host (`gpu1:%3`) so every part that takes a pane id reaches the right server;
  the prefix is stripped from a `-t` target before tmux sees it.
* `RemoteControlClient` is the control-mode client (`tmux -C attach -r`) run on the far side:
  stdin stays a pipe, no tty is needed; output and pane events arrive as locally, with the
  host's pane ids.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import os
import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pitcrew.supervisor.adapters.control import (
    Attached,
    ControlClient,
    ControlGone,
    Output,
    Topology,
)
from pitcrew.supervisor.adapters.remote_shell import Ran, RemoteShell
from pitcrew.supervisor.adapters.tmux import SEP, PaneInfo, Tmux, TmuxResult
from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.core.hosts import Host, HostState

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 8          # seconds: ssh's own ConnectTimeout
ALIVE_INTERVAL = 5           # seconds between keep-alives; 2 missed = the link is down
BACKOFF = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
STABLE_AFTER = 30.0          # seconds up before the backoff starts from the beginning again


class HostDown(TmuxError):
    """The host's connection is not up: nothing was sent."""


def control_dir(runtime_dir: Path) -> Path:
    """A private directory for the master sockets. A socket path must stay under ~100 bytes,
    so a deep runtime dir falls back to a short per-user one in the temp dir."""
    wanted = runtime_dir / "ssh"
    if len(str(wanted)) > 60:
        digest = hashlib.sha1(str(wanted).encode()).hexdigest()[:8]
        wanted = Path(tempfile.gettempdir()) / f"pitcrew-ssh-{os.getuid()}-{digest}"
    wanted.mkdir(parents=True, exist_ok=True)
    os.chmod(wanted, 0o700)
    return wanted


class SshLink:
    """The connection to one host, kept up by a thread of its own (`start()`/`stop()`)."""

    def __init__(self, host: Host, control: Path, on_change: Callable[[str, str], None]
                 | None = None, timeout: float = 15.0, binary: str = "ssh",
                 backoff: Sequence[float] = BACKOFF) -> None:
        self.host = host
        self.socket = control / f"{host.name}.sock"
        self.on_change = on_change or (lambda state, why: None)
        self.timeout = timeout
        self.binary = binary
        self.backoff = tuple(backoff)
        try:                 # `me@gpu1`, `-J jump me@gpu1`, `-F cfg alias`: split like a shell
            self.ssh_args = shlex.split(host.ssh)
        except ValueError:   # an unbalanced quote: ssh itself will say what it makes of it
            self.ssh_args = host.ssh.split()
        self.shell = RemoteShell(host.name, self.argv)
        self.state = HostState.CONNECTING
        self.problem = ""            # the last reason it is down, one line
        self.connects = 0            # masters started (tests and the bench count them)
        self._master: subprocess.Popen[bytes] | None = None
        self._down_since: float | None = None   # monotonic: since when it is down (logged)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the master ----------------------------------------------------------------------

    def options(self) -> list[str]:
        return ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT}",
                "-o", f"ServerAliveInterval={ALIVE_INTERVAL}", "-o", "ServerAliveCountMax=2",
                "-o", f"ControlPath={self.socket}"]

    def start(self) -> None:
        self._thread = threading.Thread(target=self._keep_up, name=f"ssh-{self.host.name}",
                                        daemon=True)
        self._thread.start()

    def _set(self, state: str, why: str = "") -> None:
        """Change the state, telling `on_change` every time and the log once per change a
        user cares about: down (once however many attempts fail), up, up again."""
        if state == self.state and why == self.problem:
            return
        self.state, self.problem = state, why
        if state == HostState.DOWN and self._down_since is None:
            self._down_since = time.monotonic()
            log.warning("host %s is down: %s%s", self.host.name, why,
                        "; trying again (said once, and again when it is back)"
                        if self._thread is not None else "")
        elif state == HostState.UP and self._down_since is not None:
            down = time.monotonic() - self._down_since
            self._down_since = None
            log.info("host %s: up again (it was down for %s)", self.host.name, _span(down))
        elif state == HostState.UP:
            log.info("host %s: up", self.host.name)
        else:   # trying again, or failing again while down
            log.debug("host %s: %s %s", self.host.name, state, why)
        self.on_change(state, why)

    def connect(self) -> bool:
        """Start the master and wait until it answers; False (state down) when it cannot."""
        if self.socket.exists():
            self._exit_stale_master()
        with contextlib.suppress(OSError):
            self.socket.unlink()
        self._set(HostState.CONNECTING, self.problem)
        self.connects += 1
        try:
            master = subprocess.Popen(
                [self.binary, "-M", "-N", "-o", "ControlPersist=no", *self.options(),
                 *self.ssh_args],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError as exc:
            self._set(HostState.DOWN, f"cannot run ssh: {exc}")
            return False
        self._master = master
        deadline = time.monotonic() + CONNECT_TIMEOUT + 2
        while time.monotonic() < deadline and not self._stop.is_set():
            if master.poll() is not None:
                err = master.stderr.read().decode("utf-8", "replace") if master.stderr else ""
                self._set(HostState.DOWN, _one_line(err) or f"ssh exited with {master.returncode}")
                return False
            if self.socket.exists() and self._check():
                self._set(HostState.UP)
                return True
            time.sleep(0.05)
        self._kill_master()
        self._set(HostState.DOWN, "the connection did not come up in time")
        return False

    def _check(self) -> bool:
        try:
            return subprocess.run([self.binary, "-O", "check", *self.options(),
                                   *self.ssh_args], capture_output=True,
                                  timeout=5, stdin=subprocess.DEVNULL).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    def _keep_up(self) -> None:
        """Connect, wait for the master to exit, connect again. Failed attempts back off
        (1, 2, 4 … 60 s); a connection that was up is tried again after the first step, so a
        drop is mended at once whatever the attempts before it reached, and only drops in a
        row, each within STABLE_AFTER of coming up, back off (a link that flaps)."""
        failures = 0      # connection attempts in a row that failed
        drops = 0         # connections in a row that dropped within STABLE_AFTER
        while not self._stop.is_set():
            if self.connect():
                failures = 0
                up_at = time.monotonic()
                master = self._master
                assert master is not None
                while master.poll() is None and not self._stop.is_set():
                    self._stop.wait(0.2)
                if self._stop.is_set():
                    break
                err = master.stderr.read().decode("utf-8", "replace") if master.stderr else ""
                self._set(HostState.DOWN, _one_line(err) or "the connection dropped")
                drops = drops + 1 if time.monotonic() - up_at <= STABLE_AFTER else 1
                wait = self.backoff[min(drops - 1, len(self.backoff) - 1)]
            else:
                wait = self.backoff[min(failures, len(self.backoff) - 1)]
                failures += 1
            self._stop.wait(wait)

    def stop(self) -> None:
        self._stop.set()
        self.shell.stop()
        self._kill_master()
        if self._thread is not None:
            self._thread.join(5)

    def drop(self) -> None:
        """End the master now (tests; a changed config): the keeper reconnects."""
        self._kill_master()

    def _exit_stale_master(self) -> None:
        """A master still listening on our socket was left by a Pitcrew that was killed (it
        is not our child, and nothing else would ever stop it): ask it to exit, or it keeps
        its connection open for as long as the host answers."""
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run([self.binary, "-o", f"ControlPath={self.socket}", "-O", "exit",
                            *self.ssh_args], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=5)
        # it answers first and removes its socket as it goes: let it, or it could remove
        # the socket of the master started next
        deadline = time.monotonic() + 3
        while self.socket.exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _kill_master(self) -> None:
        master = self._master
        if master is not None and master.poll() is None:
            master.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                master.wait(3)
            if master.poll() is None:
                master.kill()
                master.wait()

    # -- commands ------------------------------------------------------------------------

    def argv(self, remote: Sequence[str] | str) -> list[str]:
        """The local command line that runs `remote` on the host over the master."""
        command = remote if isinstance(remote, str) else shlex.join(remote)
        return [self.binary, "-o", "ControlMaster=no", *self.options(), *self.ssh_args,
                "--", command]

    def run(self, remote: Sequence[str] | str, timeout: float | None = None) -> Ran:
        """Run a command on the host, in the link's one remote shell (adapters/remote_shell.py);
        HostDown when the link is not up (nothing sent), TmuxError when it fails meanwhile."""
        if self.state != HostState.UP:
            raise HostDown(f"host {self.host.name} is {self.state}"
                           + (f": {self.problem}" if self.problem else ""))
        command = remote if isinstance(remote, str) else shlex.join(remote)
        log.debug("ssh %s: %s", self.host.name, command[:80])
        return self.shell.run(command, timeout or self.timeout)


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


class RemoteTmux(Tmux):
    """A tmux server on a remote host, run through its link. Pane ids are `<host>:%N`."""

    def __init__(self, link: SshLink, timeout: float = 10.0) -> None:
        super().__init__(link.host.tmux_socket, timeout=timeout)
        self.link = link
        self.prefix = f"{link.host.name}:"

    @property
    def label(self) -> str:
        return self.link.host.name

    def _base(self) -> list[str]:
        # `-u`: a login without LANG would make tmux print SEP (and any non-ASCII) as `_`
        base = super()._base()
        return [base[0], "-u", *base[1:]]

    def local_id(self, pane_id: str) -> str:
        return pane_id[len(self.prefix):] if pane_id.startswith(self.prefix) else pane_id

    def run(self, *args: str, path: str | None = None) -> TmuxResult:
        fixed = [self.local_id(a) if prev == "-t" else a
                 for prev, a in zip(("", *args), args, strict=False)]
        remote = [*self._base(), *fixed]
        if path is not None:
            remote = ["env", f"PATH={path}", *remote]
        proc = self.link.run(remote, timeout=self.timeout)   # a failed link raises
        return TmuxResult(tuple(args), proc.returncode,
                          proc.stdout.decode("utf-8", "backslashreplace"),
                          proc.stderr.decode("utf-8", "backslashreplace").strip())

    def _rows(self, fields: Sequence[str], *args: str) -> list[str]:
        """As locally, except that a failed link raises: an empty listing from a link that
        dropped would read as every pane closed."""
        fmt = SEP.join(f"#{{{name}}}" for name in fields)
        result = self.run(*args, "-F", fmt)
        return result.stdout.splitlines() if result.ok else []

    def list_panes(self, reap: bool = True) -> list[PaneInfo]:
        # the reaping retry in Tmux.list_panes calls this method again: prefix once
        return [p if p.pane_id.startswith(self.prefix) else
                dataclasses.replace(p, pane_id=self.prefix + p.pane_id)
                for p in super().list_panes(reap)]

    def new_window(self, session: str, argv: Sequence[str], cwd: str, name: str | None = None,
                   env: dict[str, str] | None = None) -> str:
        if cwd == "~" or cwd.startswith("~/"):     # the remote user's home, not ours
            home = self.link.run('printf %s "$HOME"').stdout.decode("utf-8", "replace")
            cwd = home + cwd[1:]
        return self.prefix + super().new_window(session, argv, cwd, name, env)

    def version(self) -> str:
        proc = self.link.run(["tmux", "-V"], timeout=self.timeout)
        return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""


class RemoteControlClient(ControlClient):
    """The control-mode client of one remote session, over the host's link. What
    it reports carries the host's pane ids (`gpu1:%3`)."""

    def __init__(self, tmux: RemoteTmux, session: str, emit: Callable[[object], None],
                 coalesce: float = 0.25) -> None:
        super().__init__(tmux, session, self._prefixed, coalesce)
        self.remote = tmux
        self.sink = emit
        self.name = f"tmux-control-{tmux.label}-{session}"

    def _prefixed(self, event: object) -> None:
        prefix = self.remote.prefix
        if isinstance(event, Output):
            event = Output(prefix + event.pane_id, event.at)
        elif isinstance(event, Topology) and event.pane_id is not None:
            event = Topology(event.session, prefix + event.pane_id)
        elif isinstance(event, Attached):
            event = Attached(event.session, tuple(prefix + p for p in event.panes))
        self.sink(event)

    def start_client(self) -> bool:
        if self.remote.link.state != HostState.UP:
            return False
        return super().start_client()

    def _command(self) -> list[str]:
        return self.remote.link.argv([*self.remote._base(), *self.attach_args()])

    def _where(self) -> str:
        return f" on {self.remote.label}"

    def _server_gone(self) -> bool:
        """Only a server that answered "no sessions" over a live link is gone: a link that
        dropped a moment ago may still read as up, and its failed question is not an answer
        (the link reconnects, and the server is looked at again then)."""
        if self.remote.link.state != HostState.UP:
            return False          # the link dropped, not the server: the link reconnects
        try:
            gone = self.tmux.server_identity() is None
        except TmuxError:
            return False
        return gone and self.remote.link._check()


__all__ = ["ControlGone", "HostDown", "RemoteControlClient", "RemoteTmux", "SshLink",
           "control_dir"]


def _span(seconds: float) -> str:
    """12 s, 4 min, 3 h: how long a host was down, as a person says it."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"
