"""A remote host's processes, read over its ssh link with one `ps` call per change.

Nothing runs on the remote side but `ps`, `readlink`, `cat /proc/<pid>/environ` and `kill`.
`snapshot()` lists every process once (pid, parent, process group, the terminal's foreground
group, state, start time, name, argv); the pane's tree, the agent in it, whether a pid is
still the same process and whether a shell waits at its prompt are all answered from that
one listing. It is re-taken when asked to (`refresh`), when tmux says a pane changed, never
on a timer of its own. Start times come from `ps lstart` in UTC (1 s resolution), the same
source every time, so an agent's identity compares equal to itself.

Limits: in the listing, argv is `ps`'s space-joined view (an argument with a space in it
splits in two) — good enough to recognise an agent; the agent's own argv, which a resume
replays, is then read exactly from /proc/<pid>/cmdline. /proc is read for that, cwd and
environment, so the remote side must be Linux for those (elsewhere: `ps`'s view, no cwd).
"""

from __future__ import annotations

import calendar
import logging
import shlex
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

from pitcrew.supervisor.adapters import processes
from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle, ProcInfo
from pitcrew.supervisor.adapters.ssh import SshLink
from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.core.process_start import same_start
from pitcrew.supervisor.providers.model import Provider

log = logging.getLogger(__name__)

PS = "LC_ALL=C TZ=UTC ps -eo pid=,ppid=,pgid=,tpgid=,stat=,lstart=,comm=,args="
FRESH_FOR = 0.5      # seconds a snapshot answers liveness questions before it is re-taken


@dataclass(frozen=True, slots=True)
class RemoteProc:
    pid: int
    ppid: int
    pgid: int
    tpgid: int
    state: str
    started: float
    name: str
    argv: tuple[str, ...]


def parse_ps(text: str) -> dict[int, RemoteProc]:
    out: dict[int, RemoteProc] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 11 or not all(w.lstrip("-").isdigit() for w in words[:4]):
            continue
        try:
            started = calendar.timegm(time.strptime(" ".join(words[5:10]),
                                                    "%a %b %d %H:%M:%S %Y"))
        except ValueError:
            continue
        pid = int(words[0])
        out[pid] = RemoteProc(pid, int(words[1]), int(words[2]), int(words[3]), words[4],
                              float(started), words[10], tuple(words[11:]))
    return out


class RemoteProcs:
    def __init__(self, link: SshLink) -> None:
        self.link = link
        self.procs: dict[int, RemoteProc] = {}
        self.taken = -1e9
        self.calls = 0                 # remote calls made (the bench counts them)

    def refresh(self) -> dict[int, RemoteProc]:
        self.calls += 1
        result = self.link.run(PS)
        if result.returncode != 0:     # the link failed mid-call: no listing, not no processes
            raise TmuxError(f"host {self.link.host.name}: cannot list processes")
        self.procs = parse_ps(result.stdout.decode("utf-8", "replace"))
        self.taken = time.monotonic()
        return self.procs

    def fresh(self) -> dict[int, RemoteProc]:
        return self.procs if time.monotonic() - self.taken < FRESH_FOR else self.refresh()

    def tree(self, pid: int) -> list[ProcInfo]:
        procs = self.fresh()
        children: dict[int, list[int]] = {}
        for p in procs.values():
            children.setdefault(p.ppid, []).append(p.pid)
        out: list[ProcInfo] = []
        frontier = [(pid, 0)] if pid in procs else []
        while frontier:
            at, depth = frontier.pop(0)
            p = procs[at]
            if not p.state.startswith("Z"):
                out.append(ProcInfo(p.pid, p.ppid, p.name, "", p.argv, "", p.started, depth))
            frontier.extend((c, depth + 1) for c in sorted(children.get(at, ())))
        return out

    def find_agent(self, pane_pid: int, providers: list[Provider]
                   ) -> tuple[Provider, ProcInfo] | None:
        """The agent in the pane (from the current snapshot), with its cwd read remotely."""
        found = processes.find_agent(self.tree(pane_pid), providers)
        if found is None:
            return None
        provider, proc = found
        return provider, replace(proc, cwd=self.cwd(proc.pid))

    def cwd(self, pid: int) -> str:
        try:
            result = self.link.run(f"readlink /proc/{int(pid)}/cwd")
        except TmuxError:
            return ""
        return result.stdout.decode("utf-8", "replace").strip() if result.returncode == 0 else ""

    def environ(self, pid: int) -> dict[str, str]:
        pairs = (item.partition("=") for item in self._nul_list(pid, "environ") if "=" in item)
        return {k: v for k, _, v in pairs}

    def cmdline(self, pid: int) -> tuple[str, ...]:
        """The process's exact argv (NUL-separated in /proc), or () when it cannot be read."""
        return tuple(self._nul_list(pid, "cmdline"))

    def _nul_list(self, pid: int, name: str) -> list[str]:
        try:
            result = self.link.run(f"cat /proc/{int(pid)}/{name}")
        except TmuxError:
            return []
        if result.returncode != 0:
            return []
        text = result.stdout.decode("utf-8", "replace")
        return text.removesuffix("\0").split("\0") if text else []

    def is_alive(self, pid: int, create_time: float | None = None) -> bool:
        try:
            p = self.fresh().get(pid)
        except TmuxError:
            return True          # cannot tell while the link is down: not a death
        return p is not None and not p.state.startswith("Z") and (
            create_time is None or same_start(p.started, create_time))

    def shell_at_prompt(self, shell_pid: int, started: float | None = None) -> bool:
        try:
            procs = self.refresh()
        except TmuxError:
            return False
        p = procs.get(shell_pid)
        if p is None or p.state.startswith("Z") or (
                started is not None and not same_start(p.started, started)):
            return False
        if any(c.ppid == shell_pid and not c.state.startswith("Z") for c in procs.values()):
            return False
        return p.pgid == p.tpgid and p.pgid > 0

    def stop_tree(self, pid: int, grace: float = 3.0) -> None:
        """SIGTERM the process and its descendants on the host; SIGKILL what is left."""
        try:
            self.refresh()
        except TmuxError:
            return
        pids = " ".join(str(p.pid) for p in self.tree(pid))
        if pids:
            script = (f"kill -TERM {pids} 2>/dev/null; for i in $(seq {int(grace * 10)}); do "
                      f"kill -0 {pids} 2>/dev/null || exit 0; sleep 0.1; done; "
                      f"kill -KILL {pids} 2>/dev/null; true")
            self.link.run(script, timeout=grace + 10)

    def launch_context(self, agent: ProcInfo, pane_pid: int,
                       provider: Provider) -> LaunchContext | None:
        """How the agent was started (see processes.launch_context), from the snapshot and
        the agent's exact argv (an argument with spaces stays one, as the resume needs it)."""
        chain = self._ancestors(agent.pid, pane_pid)
        if chain is None:
            return None
        exact = self.cmdline(agent.pid)
        if exact and processes.match_index(replace(agent, cmdline=exact),
                                           provider.process) is not None:
            agent = replace(agent, cmdline=exact)
        index = processes.match_index(agent, provider.process)
        if index is None or not agent.cmdline:
            return None
        env = self.environ(agent.pid)
        program = list(agent.cmdline[: index + 1])
        if not program[0].startswith("/"):
            program[0] = self._which(program[0], env.get("PATH"), agent.cwd)
        replay = {k: v for k, v in env.items() if k not in processes.NOT_REPLAYED}
        ctx = LaunchContext(LaunchStyle.PANE, agent.pid, agent.create_time, pane_pid,
                            agent.cmdline, tuple(program), agent.cwd, replay)
        shell = None
        for proc in chain:
            if not processes.is_interactive_shell(proc.argv):
                break
            shell = proc
        if shell is None:
            return ctx
        return replace(ctx, style=LaunchStyle.SHELL, shell_pid=shell.pid,
                       shell_name=shell.argv[0].rsplit("/", 1)[-1].lstrip("-"),
                       shell_started=shell.started)

    def _ancestors(self, pid: int, pane_pid: int) -> list[RemoteProc] | None:
        if pid == pane_pid:
            return []
        chain: list[RemoteProc] = []
        at = self.procs.get(pid)
        while at is not None and at.ppid > 1:
            parent = self.procs.get(at.ppid)
            if parent is None:
                return None
            chain.append(parent)
            if parent.pid == pane_pid:
                return list(reversed(chain))
            at = parent
        return None

    def _which(self, program: str, path: str | None, cwd: str) -> str:
        if "/" in program:
            return f"{cwd.rstrip('/')}/{program}" if cwd else program
        command = f"command -v {shlex.quote(program)}"
        if path:
            command = f"PATH={shlex.quote(path)} {command}"
        try:
            result = self.link.run(command)
        except TmuxError:
            return program
        found = result.stdout.decode("utf-8", "replace").strip()
        return found if result.returncode == 0 and found.startswith("/") else program


class RemoteExits:
    """The remote counterpart of the exit watcher: which watched agents are gone, told by
    each new snapshot (a pane's process or command changed, or the fallback rescan)."""

    def __init__(self) -> None:
        self.pids: dict[int, tuple[str, float | None]] = {}

    def watch(self, pid: int, key: str, create_time: float | None = None) -> None:
        self.pids[pid] = (key, create_time)

    def watched(self) -> set[int]:
        return set(self.pids)

    def check(self, procs: dict[int, RemoteProc]) -> Iterable[tuple[str, int]]:
        """(key, pid) of every watched agent not in `procs` any more; forgotten after."""
        gone = []
        for pid, (key, started) in list(self.pids.items()):
            p = procs.get(pid)
            if p is None or p.state.startswith("Z") or (
                    started is not None and not same_start(p.started, started)):
                gone.append((key, pid))
                del self.pids[pid]
        return gone
