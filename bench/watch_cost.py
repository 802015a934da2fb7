"""What watching costs: Pitcrew's `pitcrew watch` against a shell-script-style poller.

Starts N idle fake agents in real panes of a private tmux server, then measures over the same
window, in the same run:

* `pitcrew watch` (events from tmux control mode, exits from pidfds), and
* the baseline peers use: every 2 s, `tmux capture-pane` the last 30 lines of every pane and
  hash them (one tmux process per pane per tick).

CPU is user+system time of the watcher, its children and the tmux server (the server does
the work each capture asks for). Then, with Autopilot on, it kills one agent mid-task and
reports how soon the watcher noticed the exit and how long the resume took beyond the
mandated 5 s wait; before that, how soon it watched an agent started in a new window and in a
new session (a new session waits for tmux to go quiet: README, "What watching costs").

The remote case (`--remote 20`) puts the same kind of fleet behind a private sshd on
127.0.0.1 (tests/support/sshd.py) and measures, in one run: `pitcrew watch` watching it
locally; `pitcrew watch` watching it as a remote host (one multiplexed connection); and the
per-pane polling peers do over ssh (`ssh … tmux capture-pane` per pane every 2 s, a fresh
connection each). CPU there is every process on both ends: the watcher or poller and their
ssh clients, the sshd and everything it ran, and the tmux server.

    .venv/bin/python bench/watch_cost.py [--panes 10 50 200] [--window 20] [--remote 20]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
FAKE = REPO / "tests" / "fake_agent"
os.environ["PATH"] = f"{FAKE}{os.pathsep}{os.environ['PATH']}"

from pitcrew.supervisor.adapters.tmux import Tmux  # noqa: E402


def cpu(proc: psutil.Process, with_children: bool = True) -> float:
    try:
        t = proc.cpu_times()
        total = t.user + t.system
        if with_children:
            total += t.children_user + t.children_system
            for child in proc.children(recursive=True):
                ct = child.cpu_times()
                total += ct.user + ct.system
        return total
    except psutil.Error:
        return 0.0


class Fleet:
    def __init__(self, panes: int, root: Path) -> None:
        self.name = f"pitcrew-bench-{os.getpid()}-{panes}"
        self.tmux = Tmux(self.name, config_file="/dev/null", timeout=30)
        self.root = root
        env = {"FAKEAGENT_HOME": str(root / "fa"), "HOME": str(root)}
        env_args = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
        self.tmux.run("new-session", "-d", "-s", "keep", "-x", "120", "-y", "30", *env_args,
                      "sleep 86400")
        self.tmux.run("set-option", "-g", "remain-on-exit", "on")
        per_session = 20
        for i in range(panes):
            session = f"s{i // per_session}"
            if i % per_session == 0:
                self.tmux.run("new-session", "-d", "-s", session, "-x", "120", "-y", "30",
                              "-c", str(root), *env_args, "fakeagent")
            else:
                self.tmux.run("new-window", "-d", "-t", f"={session}:", "-c", str(root),
                              *env_args, "fakeagent")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            ready = sum("fake>" in (self.tmux.capture(p.pane_id) or "")
                        for p in self.tmux.list_panes() if p.session_name != "keep")
            if ready >= panes:
                break
            time.sleep(0.5)
        self.server = psutil.Process(int(self.tmux.run(
            "display-message", "-p", "#{pid}").stdout.strip()))

    def panes(self) -> list[str]:
        return [p.pane_id for p in self.tmux.list_panes() if p.session_name != "keep"]

    def stop(self) -> None:
        procs = [self.server, *self.server.children(recursive=True)]
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.kill()


def baseline(fleet: Fleet, window: float) -> tuple[float, float]:
    """Poll capture-pane + hash per pane every 2 s; returns (cpu seconds, elapsed)."""
    stop = threading.Event()
    me = psutil.Process()

    def loop() -> None:
        hashes: dict[str, str] = {}
        while not stop.is_set():
            started = time.monotonic()
            for pane in fleet.panes():
                out = subprocess.run(["tmux", "-L", fleet.name, "capture-pane", "-p", "-t",
                                      pane, "-S", "-30"], capture_output=True).stdout
                hashes[pane] = hashlib.md5(out, usedforsecurity=False).hexdigest()
            stop.wait(max(0.0, 2.0 - (time.monotonic() - started)))

    before = cpu(me) + cpu(fleet.server, with_children=False)
    t0 = time.monotonic()
    thread = threading.Thread(target=loop)
    thread.start()
    time.sleep(window)
    stop.set()
    thread.join()
    return cpu(me) + cpu(fleet.server, with_children=False) - before, time.monotonic() - t0


def start_watch(fleet: Fleet, home: Path, autopilot: bool) -> subprocess.Popen[str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "providers").mkdir(exist_ok=True)
    shutil.copy(FAKE / "fakeagent.toml", home / "providers" / "fakeagent.toml")
    (home / "config.toml").write_text(
        f"[autopilot]\nenabled = {'true' if autopilot else 'false'}\n")
    env = {**os.environ, "PITCREW_HOME": str(home), "PITCREW_TMUX_SOCKET": fleet.name}
    env.pop("DISPLAY", None)
    return subprocess.Popen([sys.executable, "-m", "pitcrew.supervisor", "watch"], env=env,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            bufsize=1)


def wait_line(proc: subprocess.Popen[str], needle: str | tuple[str, ...],
              timeout: float) -> float | None:
    """Read the watcher's output until `needle` (or one of them); returns the monotonic time
    it was seen."""
    needles = (needle,) if isinstance(needle, str) else needle
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    os.set_blocking(proc.stdout.fileno(), True)
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            return None
        if any(n in line for n in needles):
            return time.monotonic()
    return None


def pitcrew(fleet: Fleet, window: float, home: Path) -> tuple[float, float, float]:
    """(cpu seconds in the window, elapsed, watcher RSS MB) once it has found every pane."""
    proc = start_watch(fleet, home, autopilot=False)
    watcher = psutil.Process(proc.pid)
    count = len(fleet.panes())
    seen = 0
    assert proc.stdout is not None
    deadline = time.monotonic() + 180
    while seen < count and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.rstrip().endswith(": idle"):   # its first screen read is done
            seen += 1
    threading.Thread(target=proc.stdout.read, daemon=True).start()   # keep its pipe drained
    settle(fleet)
    before = cpu(watcher) + cpu(fleet.server, with_children=False)
    t0 = time.monotonic()
    time.sleep(window)
    used = cpu(watcher) + cpu(fleet.server, with_children=False) - before
    elapsed = time.monotonic() - t0
    rss = watcher.memory_info().rss / 1e6
    proc.send_signal(signal.SIGTERM)
    proc.wait(20)
    return used, elapsed, rss


def settle(fleet: Fleet, timeout: float = 120) -> None:
    """Wait for the steady state: every session has the watcher's control client (until
    then the watcher lists panes every second, see README "What watching costs"), then past
    one fallback re-listing."""
    sessions = len(fleet.tmux.run("list-sessions", "-F", "x").stdout.split())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        flags = fleet.tmux.run("list-clients", "-F", "#{client_flags}").stdout.split()
        if sum("control-mode" in f for f in flags) >= sessions:
            break
        time.sleep(0.5)
    time.sleep(12)


def opened(fleet: Fleet, proc: subprocess.Popen[str], *target: str) -> float | None:
    """Seconds from `tmux new-window -t SESSION:` (or `new-session -s NAME`) with an agent
    in it to the watcher's "watching Fake Agent" line for the new pane, which is then closed."""
    env = ["-e", f"FAKEAGENT_HOME={fleet.root / 'fa'}", "-e", f"HOME={fleet.root}"]
    started = time.monotonic()
    pane = fleet.tmux.run(*target, "-d", "-P", "-F", "#{pane_id}", "-c", str(fleet.root),
                          *env, "fakeagent").stdout.strip()
    seen = wait_line(proc, f"{pane}: watching Fake Agent", 30)
    fleet.tmux.run("kill-pane", "-t", pane)
    return seen - started if seen else None


def latency(root: Path) -> tuple[float | None, float | None, float | None, float | None]:
    """(seconds to notice a new window's agent, a new session's agent — which waits for tmux
    to go quiet, see README "What watching costs" —, an agent killed mid-task's exit, and its
    resume beyond the mandated 5 s)."""
    fleet = Fleet(1, root / "lat")
    try:
        home = root / "lat-home"
        proc = start_watch(fleet, home, autopilot=True)
        if wait_line(proc, ": idle", 30) is None:
            return None, None, None, None
        [pane] = fleet.panes()
        window = opened(fleet, proc, "new-window", "-t", "=s0:")
        session = opened(fleet, proc, "new-session", "-s", "later")
        fleet.tmux.send_text(pane, "work 60")
        fleet.tmux.send_keys(pane, "Enter")
        if wait_line(proc, f"{pane}: busy", 30) is None:
            return window, session, None, None
        info = fleet.tmux.pane(pane)
        assert info is not None
        killed = time.monotonic()
        os.kill(info.pid, signal.SIGKILL)          # the agent is the pane's own process
        noticed = wait_line(proc, "exited (status", 10)
        resumed = wait_line(proc, ("respawned the pane", "typed the resume command"), 30)
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
        return (window, session, (noticed - killed) if noticed else None,
                (resumed - killed - 5.0) if resumed else None)
    finally:
        fleet.stop()


def cpu_tree(proc: psutil.Process) -> float:
    """CPU of a process and all it ever ran: its own and each live descendant's time, plus
    what each of them reaped (nothing counted twice: a reaped child is no longer live)."""
    total = 0.0
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


def remote_case(n: int, window: float, root: Path) -> None:
    """The same fleet watched locally, through one ssh connection, and polled per pane over
    ssh; one line each, and the two ratios the issue asks for."""
    from tests.support.sshd import ALIAS, Sshd

    fleet = Fleet(n, root / f"r{n}")
    sshd = Sshd(root / "sshd")
    sshd.start()
    assert sshd.proc is not None
    daemon, me = psutil.Process(sshd.proc.pid), psutil.Process()

    def total(*procs: psutil.Process) -> float:
        return sum(cpu_tree(p) for p in procs) + cpu(fleet.server, with_children=False)

    try:
        local, _, _ = pitcrew(fleet, window, root / f"rl{n}")
        home = root / f"rr{n}"
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            f'[[hosts]]\nname = "bench"\nssh = "{sshd.ssh_spec}"\n'
            f'tmux_socket = "{fleet.name}"\n')
        ours = pitcrew_remote(fleet, window, home, lambda w: total(w, daemon))
        stop = threading.Event()

        def poll() -> None:
            while not stop.is_set():
                started = time.monotonic()
                for pane in fleet.panes():
                    subprocess.run(["ssh", "-F", str(sshd.ssh_config), ALIAS, "tmux", "-L",
                                    fleet.name, "capture-pane", "-p", "-t", pane, "-S", "-30"],
                                   capture_output=True, stdin=subprocess.DEVNULL)
                stop.wait(max(0.0, 2.0 - (time.monotonic() - started)))

        before = total(me, daemon)
        thread = threading.Thread(target=poll)
        thread.start()
        time.sleep(window)
        stop.set()
        thread.join()
        polled = total(me, daemon) - before
    finally:
        sshd.stop()
        fleet.stop()
    print(f"remote, {n} panes: local watch {local:.3f}s, over one ssh connection "
          f"{ours:.3f}s ({ours / local if local else float('inf'):.1f}× local), per-pane ssh "
          f"capture-pane every 2 s {polled:.2f}s ({polled / ours if ours else float('inf'):.0f}"
          "× ours)")


def pitcrew_remote(fleet: Fleet, window: float, home: Path,
                   measure: Callable[[psutil.Process], float]) -> float:
    """CPU in the window of `pitcrew watch` watching the fleet as a remote host."""
    (home / "providers").mkdir(exist_ok=True)
    shutil.copy(FAKE / "fakeagent.toml", home / "providers" / "fakeagent.toml")
    # an idle local tmux server beside it, as on a laptop that also runs tmux: with none at
    # all Pitcrew looks for one every second, a local cost that is not the remote one
    local = Tmux(f"pitcrew-bench-local-{os.getpid()}", config_file="/dev/null")
    local.run("new-session", "-d", "-s", "idle", "sleep 86400")
    env = {**os.environ, "PITCREW_HOME": str(home), "PITCREW_TMUX_SOCKET": local.socket or ""}
    env.pop("DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-m", "pitcrew.supervisor", "watch"], env=env,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            bufsize=1)
    watcher = psutil.Process(proc.pid)
    count, seen = len(fleet.panes()), 0
    assert proc.stdout is not None
    deadline = time.monotonic() + 180
    while seen < count and time.monotonic() < deadline:
        if proc.stdout.readline().rstrip().endswith(": idle"):
            seen += 1
    time.sleep(12)
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    before = measure(watcher)
    time.sleep(window)
    used = measure(watcher) - before
    proc.send_signal(signal.SIGTERM)
    proc.wait(20)
    local.run("kill-server")
    return used


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--panes", type=int, nargs="*", default=[10, 50, 200])
    parser.add_argument("--window", type=float, default=20.0)
    parser.add_argument("--remote", type=int, default=0, metavar="N",
                        help="also measure N panes on a remote host (127.0.0.1 over ssh)")
    parser.add_argument("--no-latency", action="store_true", help="skip the crash timing")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB, "
          f"{sys.platform}; window {args.window:g}s")
    print(f"{'panes':>6} {'baseline cpu':>13} {'pitcrew cpu':>12} {'ratio':>7} {'rss MB':>7}")
    with tempfile.TemporaryDirectory(prefix="pitcrew-bench-") as tmp:
        root = Path(tmp)
        for n in args.panes:
            fleet = Fleet(n, root / f"f{n}")
            try:
                base, _ = baseline(fleet, args.window)
                ours, _, rss = pitcrew(fleet, args.window, root / f"h{n}")
            finally:
                fleet.stop()
            ratio = base / ours if ours > 0 else float("inf")
            print(f"{n:>6} {base:>12.2f}s {ours:>11.3f}s {ratio:>6.0f}× {rss:>7.0f}")
        if args.remote:
            remote_case(args.remote, args.window, root)
        if args.no_latency:
            return 0
        window, session, noticed, beyond = latency(root)
        print(f"agent in a new window watched after: {window * 1000:.0f} ms" if window
              else "new window: not seen")
        print(f"agent in a new session watched after: {session:.1f} s" if session
              else "new session: not seen")
        print(f"exit noticed after: {noticed * 1000:.0f} ms" if noticed else "exit: not seen")
        print(f"resume done {beyond:.2f} s after the mandated 5 s wait" if beyond is not None
              else "resume: not seen")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
