"""A real `sshd` on 127.0.0.1 for the remote-host tests, and a tmux server reached only
through it.

The daemon runs from a private config (its own host key, `AuthorizedKeysFile` in the temp dir,
`StrictModes no`, `UsePAM no`) on a free port, as the current user — or as root, where it
needs `/run/sshd`. The client side is an ssh config file naming the host alias `pitcrew-test`
with the user's key, `BatchMode yes` and a known-hosts file in the temp dir, so `ssh -F cfg
pitcrew-test` is all a test (and Pitcrew's `ssh = …` setting) needs.

`kill_connections()` kills the per-connection sshd processes (the listener stays), which is
what a dropped network link looks like to the client; `stop()`/`start()` take the whole
daemon down and up again.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shlex
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import psutil

from tests.support import isolation
from tests.support.tmux_server import kill_trees, socket_processes
from tests.support.waiting import wait_until

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
ALIAS = "pitcrew-test"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Sshd:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.user = getpass.getuser()
        self.host_key = root / "host_ed25519"
        self.client_key = root / "id_ed25519"
        self.authorized = root / "authorized_keys"
        self.sshd_config = root / "sshd_config"
        self.ssh_config = root / "ssh_config"
        self.known_hosts = root / "known_hosts"
        self.remote_home = root / "home"
        self.remote_home.mkdir(exist_ok=True)
        self.proc: subprocess.Popen[bytes] | None = None
        self._keys()
        self._configs()

    def _keys(self) -> None:
        for key in (self.host_key, self.client_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                           check=True, stdin=subprocess.DEVNULL)
        self.authorized.write_text(Path(f"{self.client_key}.pub").read_text())
        pub = Path(f"{self.host_key}.pub").read_text().split()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {pub[0]} {pub[1]}\n")

    def _configs(self) -> None:
        self.sshd_config.write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.host_key}\n"
            f"AuthorizedKeysFile {self.authorized}\nPidFile {self.root / 'sshd.pid'}\n"
            "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
            "PermitRootLogin prohibit-password\nAllowTcpForwarding no\nX11Forwarding no\n"
            "PrintMotd no\nMaxSessions 100\nMaxStartups 100\nLogLevel ERROR\n"
            "Subsystem sftp internal-sftp\n"
            # the "remote" user's PATH is the tests' own, fake agents included (as a user's
            # login PATH holds their CLIs); their HOME is the daemon's folder, not the
            # account's real one (sshd would give its passwd entry's: the suite's leak)
            f"SetEnv PATH={os.environ.get('PATH', '/usr/bin:/bin')} HOME={self.remote_home}\n")
        self.ssh_config.write_text(
            f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port {self.port}\n  User {self.user}\n"
            f"  IdentityFile {self.client_key}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {self.known_hosts}\n  StrictHostKeyChecking yes\n"
            "  BatchMode yes\n  LogLevel ERROR\n")

    @property
    def ssh_spec(self) -> str:
        """What a host's `ssh = …` setting holds to reach this daemon."""
        return f"-F {self.ssh_config} {ALIAS}"

    def start(self) -> None:
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)   # privilege separation dir
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self.sshd_config)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(self.root / "sshd.log", "ab"))  # noqa: SIM115
        wait_until(self._listening, 10, message=f"sshd on port {self.port}: "
                   f"{(self.root / 'sshd.log').read_text(errors='replace')}")

    def _listening(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError("sshd exited: "
                                 + (self.root / "sshd.log").read_text(errors="replace"))
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", self.port)) == 0

    def ssh(self, command: str, timeout: float = 15.0) -> subprocess.CompletedProcess[str]:
        """Run a shell command on the "remote" side (a fresh connection each time)."""
        return subprocess.run(["ssh", "-F", str(self.ssh_config), ALIAS, command],
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def connections(self) -> list[psutil.Process]:
        """The per-connection sshd processes (children of the listener)."""
        if self.proc is None:
            return []
        with contextlib.suppress(psutil.Error):
            return psutil.Process(self.proc.pid).children()
        return []

    def kill_connections(self) -> int:
        """Drop every open connection (the listener stays up); how many were killed."""
        killed = 0
        for proc in self.connections():
            with contextlib.suppress(psutil.Error):
                proc.kill()
                killed += 1
        return killed

    def stop(self) -> None:
        if self.proc is not None:
            connections = self.connections()
            self.proc.kill()             # the listener first: no new connection meanwhile
            self.proc.wait()
            for proc in connections:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            self.proc = None


class RemoteTmuxServer:
    """A tmux server that the test itself reaches only through ssh (`tmux -L <socket>` run
    on the far side): the agents in it are "remote" to Pitcrew. Its panes get the fake agent's
    environment like the local test server's."""

    def __init__(self, sshd: Sshd, root: Path) -> None:
        self.sshd = sshd
        self.socket = f"pitcrew-remote-{uuid.uuid4().hex[:10]}"
        isolation.register_socket(self.socket)
        self.root = root
        self.home = root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.fake_home = root / "fakeagent-home"
        self.env = {"HOME": str(self.home), "FAKEAGENT_HOME": str(self.fake_home),
                    "TERM": "xterm-256color", "LANG": "C.UTF-8", "PS1": "$ ",
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin")}

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        # tmux hands a new pane its client's PATH (see adapters/tmux.py): the fake agent's
        return self.sshd.ssh(shlex.join(["env", f"PATH={self.env['PATH']}", "tmux", "-L",
                                         self.socket, "-f", "/dev/null", *args]))

    def wait_watched(self, timeout: float = 30.0) -> None:
        """Until the watcher's control client is attached to every session here (as
        `TmuxServer.wait_watched`: a host's sessions wait 3 s for theirs)."""
        def attached() -> bool:
            sessions = set(self.tmux("list-sessions", "-F", "#{session_name}").stdout.split())
            clients = self.tmux("list-clients", "-F", "#{client_session}").stdout.split()
            return sessions <= set(clients)     # no session (no server): nothing to wait for
        wait_until(attached, timeout, interval=0.2,
                   message="the watcher's control client on every remote session")

    def start(self, command: str | Sequence[str], cwd: Path | str | None = None,
              env: Mapping[str, str] | None = None, keep_dead: bool = True) -> str:
        """Run `command` in a new window on the remote server; returns the pane id."""
        argv = command if isinstance(command, str) else shlex.join(command)
        merged = {**self.env, **(env or {})}
        envargs = [a for k, v in merged.items() for a in ("-e", f"{k}={v}")]
        cwd = str(cwd or self.root)
        if self.tmux("has-session").returncode != 0:
            made = self.tmux("new-session", "-d", "-s", "work", "-x", "120", "-y", "40",
                             "-c", cwd, *envargs, "sh -c 'exec sleep 86400'")
            assert made.returncode == 0, made.stderr
            self.tmux("set-option", "-g", "remain-on-exit", "on" if keep_dead else "off")
        made = self.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "work:", "-c", cwd,
                         *envargs, argv)
        assert made.returncode == 0, made.stderr
        pane = made.stdout.strip()
        if keep_dead:
            self.tmux("set-option", "-p", "-t", pane, "remain-on-exit", "on")
        return pane

    def screen(self, pane_id: str) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", pane_id).stdout

    def wait_for_text(self, pane_id: str, needle: str, timeout: float = 15.0) -> str:
        return wait_until(lambda: needle in self.screen(pane_id) and self.screen(pane_id),
                          timeout, message=f"{needle!r} on remote {pane_id}")

    def type(self, pane_id: str, text: str, enter: bool = True) -> None:
        self.tmux("send-keys", "-t", pane_id, "-l", text)
        if enter:
            self.tmux("send-keys", "-t", pane_id, "Enter")

    def stop(self) -> None:
        pids = self.tmux("list-panes", "-a", "-F", "#{pane_pid}").stdout.split()
        for pid in pids:
            with contextlib.suppress(psutil.Error, ValueError):
                root = psutil.Process(int(pid))
                for proc in [*root.children(recursive=True), root]:
                    with contextlib.suppress(psutil.Error):
                        proc.kill()
        self.tmux("kill-server")
        # the "remote" side is this machine: when sshd is down (a test stopped it) the
        # server is still reached by its pid; and tmux leaves its socket file behind
        kill_trees(socket_processes(self.socket))
        with contextlib.suppress(OSError):
            (Path(f"/tmp/tmux-{os.getuid()}") / self.socket).unlink()


@contextlib.contextmanager
def sshd_server(root: Path) -> Iterator[Sshd]:
    daemon = Sshd(root)
    daemon.start()
    try:
        yield daemon
    finally:
        daemon.stop()
