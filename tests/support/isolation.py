"""One private HOME for the whole test run, and a check at its end that the run left nothing
behind.

Every process of the run (pytest, its xdist workers, everything they start) sees a HOME, the
XDG directories, a TMPDIR and a TMUX_TMPDIR inside one temporary folder of the run (a
subfolder per xdist worker, so workers never share a `~/.fakeagent`, a default tmux socket
or a checker's work folder). Nothing a test starts can write to the user's real HOME by
accident (the fake agent's sessions, platformdirs' folders, Qt's settings): a test that needs
the real one has to say so and take it from `real_home()`.

The folder's path is also a tag: RUN_VAR names it in every process's environment, inherited by
whatever the run starts. When the run ends, `Leaks.check()` looks for processes still
carrying it (or working in the run's folders, or named after a tmux socket of the run: what
sshd starts for the remote tests does not inherit our environment) and for new entries in
the real HOME, kills what it found and fails the run.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil

RUN_VAR = "PITCREW_TEST_RUN"    # the run's temporary folder; set once, by the first process
REAL_HOME_VAR = "PITCREW_TEST_REAL_HOME"   # the HOME the run was started with
# new entries in the real HOME down to DEPTH levels count as leaks (`~/.fakeagent/sessions/x`),
# except under folders of tools that write there on their own (on a shared machine)
DEPTH = 3
IGNORED = frozenset({".cache/pip", ".npm", ".claude", ".cargo", ".rustup", ".pyenv", ".m2"})
GRACE = 10.0    # seconds the run's processes get to exit after the last test


def run_root() -> Path:
    """The run's folder: made by the first process (pytest, or xdist's controller) in the
    system temp dir, short (unix socket paths inside it stay well under 108 bytes)."""
    if not os.environ.get(RUN_VAR):
        base = tempfile.gettempdir()
        os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", base)   # tmp_path stays where it was
        os.environ[RUN_VAR] = tempfile.mkdtemp(prefix="pitcrew-run-", dir=base)
        os.environ[REAL_HOME_VAR] = os.environ.get("HOME") or str(Path.home())
    return Path(os.environ[RUN_VAR])


def enter(worker: str) -> Path:
    """Point HOME, the XDG dirs, TMPDIR and TMUX_TMPDIR of this process (and so of everything
    it starts) into the run's folder for `worker` ("main" without xdist)."""
    base = run_root() / worker
    home = base / "home"
    dirs = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_RUNTIME_DIR": base / "run",     # 0700, as a login session's (Qt checks)
        "TMPDIR": base / "tmp",
        "TMUX_TMPDIR": base,                 # sockets in <base>/tmux-<uid>/: per worker
    }
    for var, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        os.environ[var] = str(path)
    (base / "run").chmod(0o700)
    tempfile.tempdir = None                  # gettempdir() caches: ask TMPDIR again
    return base


def real_home() -> Path:
    """The user's own HOME (for the rare test that needs it: say why)."""
    return Path(os.environ.get(REAL_HOME_VAR) or os.environ.get("HOME") or Path.home())


@contextlib.contextmanager
def machine(alone: bool) -> Iterator[None]:
    """Hold the machine for one test: shared by any number of tests, or `alone` (a test whose
    subject is CPU time or volume: the others wait on their xdist workers meanwhile).
    A turnstile in front (`gate`) lets a waiting lone test in before new shared ones."""
    root = run_root()
    with open(root / "gate", "a") as gate, open(root / "machine", "a") as held:
        fcntl.flock(gate, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
        fcntl.flock(held, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        yield                                   # closing the files lets go


def tmux_socket_dir() -> Path:
    """Where tmux puts a `-L name` socket for this process (as tmux computes it)."""
    return Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"


def register_socket(name: str) -> None:
    """Note a tmux socket name of the run: its server is a leak if alive at the end (a
    remote test's server, started by sshd, does not carry RUN_VAR)."""
    if os.environ.get(RUN_VAR):
        with open(Path(os.environ[RUN_VAR]) / "sockets", "a") as fh:
            fh.write(name + "\n")


def _home_entries(home: Path) -> set[str]:
    found: set[str] = set()

    def walk(rel: str, depth: int) -> None:
        with contextlib.suppress(OSError), os.scandir(home / rel) as entries:
            for entry in entries:
                path = os.path.join(rel, entry.name)
                if path in IGNORED:
                    continue
                found.add(path)
                if depth > 1 and entry.is_dir(follow_symlinks=False):
                    walk(path, depth - 1)
    walk("", DEPTH)
    return found


@dataclass
class Leaks:
    """What the run left behind: taken at the start, checked at the end."""

    root: Path
    temp_roots: tuple[Path, ...] = ()
    home_before: set[str] = field(default_factory=set)
    grace: float = GRACE

    @classmethod
    def start(cls, root: Path) -> Leaks:
        return cls(root, home_before=_home_entries(real_home()))

    def sockets(self) -> list[str]:
        with contextlib.suppress(OSError):
            return sorted(set((self.root / "sockets").read_text().split()))
        return []

    def _ours(self, proc: psutil.Process, sockets: Iterable[str]) -> bool:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return False
            if proc.environ().get(RUN_VAR) == str(self.root):
                return True
            cmdline = " ".join(proc.cmdline())
            cwd = proc.cwd()
        except (psutil.Error, OSError):
            return False
        roots = (str(self.root), *map(str, self.temp_roots))
        if any(cwd == r or cwd.startswith(r + os.sep) or r in cmdline for r in roots):
            return True
        return any(f" {name} " in f" {cmdline} " for name in sockets)

    def processes(self) -> list[psutil.Process]:
        """Live processes of the run, except this one and its ancestors."""
        mine = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
        sockets = self.sockets()
        return [p for p in psutil.process_iter() if p.pid not in mine and self._ours(p, sockets)]

    def check(self) -> list[str]:
        """Every leak as one line (empty: none). Leaked processes are killed, a leaked tmux
        socket file removed; the run's folder is removed when nothing is left running."""
        deadline = time.monotonic() + self.grace
        procs = self.processes()
        while procs and time.monotonic() < deadline:
            time.sleep(0.2)
            procs = self.processes()
        problems = []
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                problems.append(f"process {proc.pid} still running: {' '.join(proc.cmdline())}")
                proc.kill()
        for name in self.sockets():
            path = Path(f"/tmp/tmux-{os.getuid()}") / name
            if path.exists():          # a remote test's server (its tmux is not ours)
                problems.append(f"tmux socket left behind: {path}")
                path.unlink(missing_ok=True)
        new = sorted(_home_entries(real_home()) - self.home_before)
        problems += [f"written to the real HOME: {real_home() / entry}" for entry in new]
        if not procs:
            shutil.rmtree(self.root, ignore_errors=True)
        return problems
