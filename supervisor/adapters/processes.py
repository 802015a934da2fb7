"""Which agent runs in a pane, from the pane's real process tree (psutil).

A pane's own process is usually a shell; the agent is a descendant, and may be wrapped by an
interpreter (`node …/cli.js`, `python -m …`). Providers say how to recognise theirs
(`process.names`, `process.argv`); the shallowest match wins, so an agent that runs another
CLI as a tool is still named for itself. Processes that vanish mid-walk are skipped, never an
error.

`launch_context()` records how a running agent was started (SPEC §7 "Launch styles"): typed at
an interactive shell that is the pane's process (resume by typing at that shell once
`shell_at_prompt()`), or as the pane's own command (respawn the pane with the captured program,
cwd and environment). It must be taken while the agent runs: /proc forgets a dead process.
"""

from __future__ import annotations

import contextlib
import enum
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import psutil

from pitcrew.supervisor.core.process_start import same_start
from pitcrew.supervisor.providers.model import ProcessMatch, Provider

ARGV_DEPTH = 4  # argv patterns look at argv[0..3]: interpreter, its flags, the script


@dataclass(frozen=True, slots=True)
class ProcInfo:
    pid: int
    ppid: int
    name: str
    exe: str
    cmdline: tuple[str, ...]
    cwd: str
    create_time: float
    depth: int

    @property
    def alive(self) -> bool:
        return is_alive(self.pid, self.create_time)


def _info(proc: psutil.Process, depth: int) -> ProcInfo | None:
    try:
        with proc.oneshot():
            name = proc.name()
            cmdline = tuple(proc.cmdline())
            create_time = proc.create_time()
            ppid = proc.ppid()
            if proc.status() == psutil.STATUS_ZOMBIE:
                return None
        try:
            exe = proc.exe()
        except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
            exe = ""
        try:
            cwd = proc.cwd()
        except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
            cwd = ""
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
        return None
    return ProcInfo(proc.pid, ppid, name, exe, cmdline, cwd, create_time, depth)


def process_tree(pid: int) -> list[ProcInfo]:
    """The process `pid` and all its descendants, breadth first (shallowest first)."""
    try:
        root = psutil.Process(pid)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return []
    out: list[ProcInfo] = []
    frontier = [(root, 0)]
    while frontier:
        proc, depth = frontier.pop(0)
        info = _info(proc, depth)
        if info is None:
            continue
        out.append(info)
        try:
            children = proc.children()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            children = []
        frontier.extend((child, depth + 1) for child in children)
    return out


def match_index(proc: ProcInfo, rule: ProcessMatch) -> int | None:
    """Where in argv the agent's own program ends (the index of the last element that names
    it), or None when `rule` does not recognise `proc`.

    0 means argv[0] is the CLI itself (`claude`, `/usr/bin/codex`); 1 a wrapped script
    (`node /…/cli.js`, `python3 /…/agent`); 2 `python -m pkg`. An argv[0] named in
    `rule.names` wins; then the first argv pattern hit; a match on the process name or
    executable alone (a CLI that rewrites its process title) counts as argv[0].
    """
    if proc.cmdline and os.path.basename(proc.cmdline[0]) in rule.names:
        return 0
    for index, arg in enumerate(proc.cmdline[:ARGV_DEPTH]):
        if any(rx.search(arg) for rx in rule.argv):
            return index
    if proc.name in rule.names or (proc.exe and os.path.basename(proc.exe) in rule.names):
        return 0
    return None


def matches(proc: ProcInfo, rule: ProcessMatch) -> bool:
    return match_index(proc, rule) is not None


def find_agent(
    procs: Iterable[ProcInfo], providers: Iterable[Provider]
) -> tuple[Provider, ProcInfo] | None:
    """The shallowest process in the tree that some provider recognises."""
    ordered = sorted(procs, key=lambda p: p.depth)
    plist = list(providers)
    for proc in ordered:
        for provider in plist:
            if matches(proc, provider.process):
                return provider, proc
    return None


def provider_for_command(command: str, providers: Iterable[Provider]) -> Provider | None:
    """Guess the provider from a command line string (a dead pane's start command)."""
    words = command.replace('"', " ").replace("'", " ").split()
    if not words:
        return None
    fake = ProcInfo(0, 0, os.path.basename(words[0]), "", tuple(words), "", 0.0, 0)
    for provider in providers:
        if matches(fake, provider.process) or any(
            os.path.basename(w) in provider.process.names for w in words[:ARGV_DEPTH]
        ):
            return provider
    return None


def environ(pid: int) -> dict[str, str]:
    """The process's environment (HOME, CLAUDE_CONFIG_DIR, …); {} when it cannot be read."""
    try:
        return dict(psutil.Process(pid).environ())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
        return {}


def is_alive(pid: int, create_time: float | None = None) -> bool:
    """True while `pid` runs — and is still the same process when `create_time` is given."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return create_time is None or same_start(proc.create_time(), create_time)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False


# -- how an agent was started (SPEC §7 "Launch styles") -------------------------------------

# Shells that sit at a prompt when started without a script: a pane whose own process is one
# of these (`-bash`, `bash -l`, `zsh`) is a shell the user types commands into.
SHELLS = frozenset({"bash", "zsh", "fish", "sh", "dash", "ksh", "mksh", "tcsh", "csh", "nu",
                    "pwsh", "elvish", "xonsh"})
_SHELL_OPTS_WITH_ARG = frozenset({"--rcfile", "--init-file", "-o", "+o", "-O", "+O"})

# Variables never replayed when a pane is respawned with the agent's environment. Replaying
# them would be wrong, not just useless:
# * TMUX, TMUX_PANE: name the old pane (and maybe an old server); tmux sets both afresh.
# * SHLVL, _, PWD, OLDPWD: the launching shell's own bookkeeping; a stale PWD misleads every
#   program that trusts $PWD over getcwd() (the cwd itself is passed with `-c`).
# * COLUMNS, LINES: the terminal size at launch; a program that sees them ignores the
#   pane's real (maybe resized) size.
# * TERM, TERM_PROGRAM, TERM_PROGRAM_VERSION: describe the terminal; tmux sets them for the
#   pane it creates.
# * WINDOWID, DISPLAY, XAUTHORITY, SSH_AUTH_SOCK, SSH_AGENT_PID, SSH_ASKPASS, SSH_CONNECTION,
#   KRB5CCNAME: tmux's default `update-environment` list. They belong to the client the user
#   attached from and go stale when they re-attach (a dead ssh-agent socket breaks `git push`);
#   left out, the pane gets the session's current values from tmux.
NOT_REPLAYED = frozenset({
    "TMUX", "TMUX_PANE", "SHLVL", "_", "PWD", "OLDPWD", "COLUMNS", "LINES",
    "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION",
    "WINDOWID", "DISPLAY", "XAUTHORITY", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_ASKPASS",
    "SSH_CONNECTION", "KRB5CCNAME",
})


class LaunchStyle(enum.StrEnum):
    SHELL = "shell"   # typed at an interactive shell that is the pane's process: resume there
    PANE = "pane"     # the pane's own command (maybe via `env`, a script): respawn the pane


@dataclass(frozen=True, slots=True)
class LaunchContext:
    """How a running agent was started, captured while it runs so it can be resumed the same
    way after it died (then /proc no longer has any of it).

    `program` is the argv prefix that starts the agent itself (`/usr/bin/claude`,
    `/usr/bin/node /…/cli.js`, `/venv/bin/python -m pkg`), its first element absolute, so a
    resume runs the same binary whatever PATH the resuming process has. `env` is the agent's
    own environment minus `NOT_REPLAYED`. The `shell_*` fields are set only for SHELL: the
    shell to type the resume command into, and its start time to know it is still the same.

    `env` holds whatever the user exported, API keys included: keep `to_json()` in private
    state (never the ledger or a log line).
    """

    style: LaunchStyle
    pid: int
    started: float
    pane_pid: int
    argv: tuple[str, ...]
    program: tuple[str, ...]
    cwd: str
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    shell_pid: int | None = None
    shell_name: str | None = None
    shell_started: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"style": self.style.value, "pid": self.pid, "started": self.started,
                "pane_pid": self.pane_pid, "argv": list(self.argv),
                "program": list(self.program), "cwd": self.cwd, "env": dict(self.env),
                "shell_pid": self.shell_pid, "shell_name": self.shell_name,
                "shell_started": self.shell_started}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LaunchContext:
        """The inverse of `to_json`; raises ValueError on anything else (a corrupt state)."""
        try:
            env = data["env"]
            if not isinstance(env, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
                raise ValueError("env must map strings to strings")
            shell_pid, shell_started = data.get("shell_pid"), data.get("shell_started")
            shell_name = data.get("shell_name")
            ctx = cls(LaunchStyle(data["style"]), int(data["pid"]), float(data["started"]),
                      int(data["pane_pid"]), _strings(data["argv"]), _strings(data["program"]),
                      str(data["cwd"]), dict(env),
                      None if shell_pid is None else int(shell_pid),
                      None if shell_name is None else str(shell_name),
                      None if shell_started is None else float(shell_started))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a launch context: {exc}") from None
        if not ctx.program or (ctx.style is LaunchStyle.SHELL and ctx.shell_pid is None):
            raise ValueError("not a launch context: no program, or a shell style without shell")
        return ctx


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of strings, got {value!r}")
    return tuple(value)


def is_interactive_shell(cmdline: Sequence[str]) -> bool:
    """A shell started to read commands from its terminal: no script, no `-c`."""
    if not cmdline:
        return False
    if os.path.basename(cmdline[0]).lstrip("-") not in SHELLS:
        return False
    args = iter(cmdline[1:])
    for arg in args:
        if arg in _SHELL_OPTS_WITH_ARG:
            next(args, None)
        elif arg == "--" or not arg.startswith(("-", "+")):
            return False          # `bash script.sh`, `sh -- script`: runs a script and exits
        elif not arg.startswith("--") and "c" in arg[1:]:
            return False          # `-c`, `-lc`: runs one command and exits
    return True


def launch_context(agent: ProcInfo | int, pane_pid: int,
                   provider: Provider) -> LaunchContext | None:
    """How `agent` (a process in the pane whose own process is `pane_pid`) was started;
    None when it is gone, is not under that pane, or `provider` does not recognise it.

    SHELL when the pane's process is an interactive shell with the agent below it; the shell
    recorded is the deepest one of an unbroken chain of interactive shells from the pane down
    (`bash` typed in `bash` is where a resume must be typed). Everything else is PANE: the
    agent is the pane's process, or a non-interactive wrapper is (`env`, a script, `sh -c`).
    """
    info = agent if isinstance(agent, ProcInfo) else _proc_info(agent)
    if info is None:
        return None
    index = match_index(info, provider.process)
    chain = _ancestors(info.pid, pane_pid)
    if index is None or chain is None or not info.cmdline:
        return None
    env = environ(info.pid)
    program = list(info.cmdline[: index + 1])
    program[0] = _absolute(program[0], env.get("PATH"), info.cwd)
    replay = {k: v for k, v in env.items() if k not in NOT_REPLAYED}
    ctx = LaunchContext(LaunchStyle.PANE, info.pid, info.create_time, pane_pid, info.cmdline,
                        tuple(program), info.cwd, replay)
    shell = None
    try:
        for proc in chain:                  # pane process first, down to the agent's parent
            if not is_interactive_shell(proc.cmdline()):
                break
            shell = proc
        if shell is None:
            return ctx
        return replace(ctx, style=LaunchStyle.SHELL, shell_pid=shell.pid,
                       shell_name=os.path.basename(shell.cmdline()[0]).lstrip("-"),
                       shell_started=shell.create_time())
    except psutil.Error:
        return None                         # the shell went away while we looked


def _proc_info(pid: int) -> ProcInfo | None:
    try:
        return _info(psutil.Process(pid), 0)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None


def _ancestors(pid: int, pane_pid: int) -> list[psutil.Process] | None:
    """The processes from `pane_pid` down to `pid`'s parent; [] when `pid` is the pane's
    process, None when `pid` is not in that pane."""
    if pid == pane_pid:
        return []
    try:
        parents = psutil.Process(pid).parents()      # nearest first
    except psutil.Error:
        return None
    for i, proc in enumerate(parents):
        if proc.pid == pane_pid:
            return list(reversed(parents[: i + 1]))
    return None


def _absolute(program: str, path: str | None, cwd: str) -> str:
    """`program` as an absolute path: looked up on the agent's own PATH when it is a bare name,
    joined to the agent's cwd when relative. Left as is when it cannot be found."""
    if os.path.isabs(program):
        return program
    if os.sep in program:
        return os.path.normpath(os.path.join(cwd, program)) if cwd else program
    return shutil.which(program, path=path) or program


def resume_argv(ctx: LaunchContext, provider_resume_argv: Sequence[str]) -> tuple[str, ...]:
    """The provider's resume command run with the agent's own program: `claude --resume X`
    becomes `/home/me/.local/bin/claude --resume X`, or `/usr/bin/node /…/cli.js --resume X`
    for a node-wrapped CLI. The provider's first element is the bare CLI name it stands for."""
    return (*ctx.program, *provider_resume_argv[1:])


def shell_at_prompt(shell_pid: int, started: float | None = None) -> bool:
    """True when the shell waits at its prompt: it is its terminal's foreground process group
    and runs no child. A shell running `vim` or `sleep` (or with a background job) is never
    typed into. False when the shell is gone, or is not the process started at `started`."""
    try:
        proc = psutil.Process(shell_pid)
        if started is not None and not same_start(proc.create_time(), started):
            return False
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        if any(child.status() != psutil.STATUS_ZOMBIE for child in proc.children()):
            return False
    except psutil.Error:
        return False
    ids = _pgrp_and_tpgid(shell_pid)
    return ids is not None and ids[0] == ids[1] and ids[0] > 0


def _pgrp_and_tpgid(pid: int) -> tuple[int, int] | None:
    """(process group, its terminal's foreground process group); None when unknown."""
    if sys.platform.startswith("linux"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            return None
        fields = stat[stat.rfind(")") + 2:].split()   # the name in (…) may hold spaces
        # after the name: state ppid pgrp session tty_nr tpgid …
        return (int(fields[2]), int(fields[5])) if len(fields) > 5 else None
    try:
        out = subprocess.run(["ps", "-o", "pgid=,tpgid=", "-p", str(pid)], capture_output=True,
                             text=True, timeout=5, check=False).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (int(out[0]), int(out[1])) if len(out) == 2 and all(
        v.lstrip("-").isdigit() for v in out) else None


def stop_tree(pid: int, grace: float = 3.0) -> None:
    """SIGTERM the process and its children, wait, then SIGKILL what is left."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        with contextlib.suppress(OSError):
            os.kill(proc.pid, signal.SIGKILL)
