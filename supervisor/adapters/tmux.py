"""The one place that runs tmux.

Contract
--------
* `Tmux.run(*args)` is the only code that executes the tmux binary. It always passes the
  server selector (`-L name`, or `-S path` when the name contains a slash; none for the user's
  default server), decodes output with `backslashreplace`, times out after `timeout` seconds,
  logs each call with `tmux_cmd`/`tmux_exit_code`, and maps a missing binary to `TmuxNotFound`.
* Reads that return lists are lenient: no server, or a server that vanished mid-call, gives an
  empty list, never an exception. `server_alive()` is the explicit probe.
* Writes (typing, options, respawn) raise `TmuxError` with tmux's own message when they fail,
  so a caller never believes a keystroke landed when it did not.
* tmux 3.3a sometimes misses the SIGCHLD of a pane's process: the pane shows dead, its child
  stays a zombie and `pane_dead_status` stays empty until some other child of the server
  exits (seen in about 1 of 10 short-lived panes under load). `list_panes()` then runs
  `run-shell true` once — its child's exit makes tmux reap every zombie — and lists again.
* When a pane dies with remain-on-exit on, tmux scrolls its last screen up into history and
  shows its "Pane is dead (status N, …)" line on an otherwise blank screen: capture a dead
  pane with `history=<pane height>` to read what it showed last.
* `respawn()` passes the environment with `-e K=V`, but tmux (3.3a at least) gives a respawned
  or new pane the PATH of the command-line client that asked for it, ignoring `-e PATH`; so
  the tmux client itself runs with that PATH (`Tmux.run(..., path=…)`).
* The server's identity is its socket, pid and start time (`#{socket_path}`, `#{pid}`,
  `#{start_time}`): pane ids start again at %0 on a restarted server, its pid and start do not.
* Text is typed with `send-keys -l` (literal: `;`, `{}`, `$(…)` arrive as typed); keys such as
  `Enter` are sent separately and only when asked for. `-l` does not make a control character
  text: `\x04` still reaches the program as Ctrl-D, so `send_text` refuses any.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pitcrew.supervisor.core.errors import TmuxError, TmuxNotFound, TmuxTimeout
from pitcrew.supervisor.core.plain_text import refusal

log = logging.getLogger(__name__)

SEP = "\x1f"  # unit separator: never in a path, title or command tmux prints
PANE_FIELDS = (
    "pane_id", "session_name", "window_index", "window_name", "pane_index", "pane_pid",
    "pane_dead", "pane_dead_status", "pane_dead_signal", "pane_current_path",
    "pane_current_command", "pane_tty", "pane_width", "pane_height", "pane_active",
    "pane_title", "pane_start_command", "pane_start_path", "cursor_x", "cursor_y",
    "pane_in_mode", "session_created",
)
SERVER_FIELDS = ("socket_path", "pid", "start_time")
_NO_SERVER = ("no server running", "error connecting to", "server exited", "lost server")


@dataclass(frozen=True, slots=True)
class TmuxResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def no_server(self) -> bool:
        return any(marker in self.stderr for marker in _NO_SERVER)


@dataclass(frozen=True, slots=True)
class PaneInfo:
    """One pane as tmux reports it. `dead_status` is None until tmux has reaped the child."""

    pane_id: str
    session_name: str
    window_index: int
    window_name: str
    pane_index: int
    pid: int
    dead: bool
    dead_status: int | None
    dead_signal: int | None
    current_path: str
    current_command: str
    tty: str
    width: int
    height: int
    active: bool
    title: str
    start_command: str
    start_path: str
    cursor_x: int        # where the cursor is: the column after a shell prompt or a typed line
    cursor_y: int
    in_mode: bool        # copy mode (or another mode) is on: typed keys would not reach the app
    session_created: int = 0   # epoch seconds, on the tmux server's own clock (0: unknown)

    @property
    def target(self) -> str:
        """A human-readable address: `session:window.pane`."""
        return f"{self.session_name}:{self.window_index}.{self.pane_index}"


def _int(value: str, default: int = 0) -> int:
    try:
        return int(value)
    except ValueError:
        return default


def _opt_int(value: str) -> int | None:
    return int(value) if value.strip().lstrip("-").isdigit() else None


def parse_pane_line(line: str) -> PaneInfo | None:
    parts = line.split(SEP)
    if len(parts) != len(PANE_FIELDS) or not parts[0].startswith("%"):
        return None
    f = dict(zip(PANE_FIELDS, parts, strict=True))
    return PaneInfo(
        pane_id=f["pane_id"],
        session_name=f["session_name"],
        window_index=_int(f["window_index"]),
        window_name=f["window_name"],
        pane_index=_int(f["pane_index"]),
        pid=_int(f["pane_pid"]),
        dead=f["pane_dead"] == "1",
        dead_status=_opt_int(f["pane_dead_status"]),
        dead_signal=_opt_int(f["pane_dead_signal"]),
        current_path=f["pane_current_path"],
        current_command=f["pane_current_command"],
        tty=f["pane_tty"],
        width=_int(f["pane_width"]),
        height=_int(f["pane_height"]),
        active=f["pane_active"] == "1",
        title=f["pane_title"],
        start_command=f["pane_start_command"],
        start_path=f["pane_start_path"],
        cursor_x=_int(f["cursor_x"]),
        cursor_y=_int(f["cursor_y"]),
        in_mode=f["pane_in_mode"] == "1",
        session_created=_int(f["session_created"]),
    )


@dataclass(frozen=True, slots=True)
class ServerIdentity:
    """Which tmux server this is. A server restarted on the same socket starts pane ids again
    at `%0`; its (pid, start time) pair is new (the start time alone has 1 s resolution)."""

    socket_path: str
    pid: int
    started: int          # seconds since the epoch, as tmux reports `#{start_time}`


def _redacted(cmd: Sequence[str]) -> list[str]:
    """`cmd` for the log: the values of `-e K=V` hidden (an agent's environment holds keys)."""
    return [arg.split("=", 1)[0] + "=…" if prev == "-e" else arg
            for prev, arg in zip(["", *cmd], cmd, strict=False)]


class Tmux:
    """A handle on one tmux server: the user's default one, or `-L socket` / `-S path`."""

    def __init__(
        self,
        socket: str | None = None,
        binary: str = "tmux",
        timeout: float = 5.0,
        config_file: str | None = None,
    ) -> None:
        self.socket = socket or None
        self.binary = binary
        self.timeout = timeout
        self.config_file = config_file  # `-f`: only read when this call starts the server
        self.filters = True             # `list-panes -f` works (tmux 3.2+; see snapshot)

    @classmethod
    def from_env(cls, socket: str | None = None) -> Tmux:
        return cls(socket or os.environ.get("PITCREW_TMUX_SOCKET") or None)

    @property
    def label(self) -> str:
        return self.socket or "default"

    def _base(self) -> list[str]:
        base = [self.binary]
        if self.socket is not None:
            base += ["-S" if "/" in self.socket else "-L", self.socket]
        if self.config_file is not None:
            base += ["-f", self.config_file]
        return base

    def run(self, *args: str, path: str | None = None) -> TmuxResult:
        """Run tmux with `args`. `path`: the PATH the tmux client runs with, which tmux hands
        to a pane it creates or respawns (see the module docstring)."""
        cmd = [*self._base(), *args]
        env = None
        if path is not None:
            cmd[0] = shutil.which(self.binary) or self.binary   # found on our PATH, not `path`
            env = {**os.environ, "PATH": path}
        try:
            proc = subprocess.run(
                cmd, capture_output=True, timeout=self.timeout, stdin=subprocess.DEVNULL, env=env
            )
        except FileNotFoundError:
            raise TmuxNotFound(
                f"tmux is not installed (looked for {self.binary!r} on PATH)"
            ) from None
        except subprocess.TimeoutExpired:
            raise TmuxTimeout(f"tmux {args[0]} did not answer within {self.timeout:g}s") from None
        result = TmuxResult(
            tuple(args),
            proc.returncode,
            proc.stdout.decode("utf-8", "backslashreplace"),
            proc.stderr.decode("utf-8", "backslashreplace").strip(),
        )
        log.debug(
            "tmux %s -> %s", " ".join(args[:2]), result.returncode,
            extra={"tmux_cmd": _redacted(cmd), "tmux_exit_code": result.returncode},
        )
        return result

    def _write(self, *args: str, path: str | None = None) -> TmuxResult:
        result = self.run(*args, path=path)
        if not result.ok:
            raise TmuxError(f"tmux {args[0]} failed on server {self.label}: {result.stderr}")
        return result

    # -- probes and lenient reads -------------------------------------------------------

    def server_alive(self) -> bool:
        try:
            return self.run("list-sessions", "-F", "#{session_id}").ok
        except TmuxError:
            return False

    def _rows(self, fields: Sequence[str], *args: str) -> list[str]:
        """A `-F` listing of `fields`, one line per row; [] when there is no server."""
        fmt = SEP.join(f"#{{{name}}}" for name in fields)
        try:
            result = self.run(*args, "-F", fmt)
        except (TmuxNotFound, TmuxTimeout):
            raise    # unknown, not empty: a hung tmux must not look like a server with no panes
        except TmuxError:
            return []
        return result.stdout.splitlines() if result.ok else []

    def server_identity(self) -> ServerIdentity | None:
        """The running server's socket, pid and start time; None when no server runs."""
        rows = self._rows(SERVER_FIELDS, "list-sessions")
        parts = rows[0].split(SEP) if rows else []
        if len(parts) != len(SERVER_FIELDS) or not parts[1].isdigit():
            return None
        return ServerIdentity(parts[0], int(parts[1]), _int(parts[2]))

    def list_panes(self, reap: bool = True) -> list[PaneInfo]:
        """Every pane of every session on this server; [] when there is no server."""
        rows = self._rows(PANE_FIELDS, "list-panes", "-a")
        panes = [p for p in map(parse_pane_line, rows) if p is not None]
        if reap and any(p.dead and p.dead_status is None and p.dead_signal is None for p in panes):
            self.run("run-shell", "true")  # make tmux reap the zombie it missed (see above)
            return self.list_panes(reap=False)
        return panes

    def pane(self, pane_id: str, reap: bool = True) -> PaneInfo | None:
        """One pane (None: gone). Lists only the window it is in: asked once a second for each
        busy pane, listing every pane of a 200-pane server each time cost O(panes²)."""
        if not pane_id.startswith("%"):
            return next((p for p in self.list_panes() if p.pane_id == pane_id), None)
        rows = self._rows(PANE_FIELDS, "list-panes", "-t", pane_id)
        found = next((p for p in map(parse_pane_line, rows)
                      if p is not None and p.pane_id == pane_id), None)
        if reap and found is not None and found.dead and found.dead_status is None \
                and found.dead_signal is None:
            self.run("run-shell", "true")  # make tmux reap the zombie it missed (see above)
            return self.pane(pane_id, reap=False)
        return found

    def has_session(self, name: str) -> bool:
        """Exact-name match (`=name`), so `api` never matches `api-2`."""
        try:
            return self.run("has-session", "-t", f"={name}").ok
        except TmuxError:
            return False

    def snapshot(self, pane_id: str) -> tuple[PaneInfo, str] | None:
        """The pane and its visible text from one tmux command, so the cursor and the text
        are of the same moment (None: the pane is gone). Read by two commands, the agent
        could print between them: text typed after the cursor was read sat right of it, as
        a placeholder hint does, and a draft in the box read as an empty one."""
        local = pane_id.rpartition(":")[2]            # a remote host's `gpu1:%3` → `%3`
        result = None
        if local.startswith("%") and self.filters:
            fmt = SEP.join(f"#{{{name}}}" for name in PANE_FIELDS)
            result = self.run("list-panes", "-t", pane_id, "-f",
                              f"#{{==:#{{pane_id}},{local}}}", "-F", fmt, ";",
                              "capture-pane", "-p", "-J", "-t", pane_id)
        row, _, text = result.stdout.partition("\n") if result and result.ok else ("", "", "")
        pane = parse_pane_line(row)
        if pane is None or pane.pane_id != local:
            # a pane gone, or a tmux without `list-panes -f` (before 3.2): two commands
            pane = self.pane(pane_id)
            captured = self.capture(pane_id) if pane is not None else None
            if result is not None and "unknown flag" in result.stderr:
                self.filters = False      # and never again on this server
            return None if pane is None or captured is None else (pane, captured)
        if pane.dead and pane.dead_status is None and pane.dead_signal is None:
            reaped = self.pane(pane_id)     # make tmux reap the zombie it missed (see above)
            return None if reaped is None else (reaped, text)
        return replace(pane, pane_id=pane_id), text

    def capture(self, pane_id: str, history: int = 0) -> str | None:
        """The pane's visible text (plus `history` lines above it); None if the pane is gone."""
        args = ["capture-pane", "-p", "-J", "-t", pane_id]
        if history:
            args += ["-S", str(-history)]
        try:
            result = self.run(*args)
        except TmuxError:
            return None
        return result.stdout if result.ok else None

    # -- writes ------------------------------------------------------------------------

    def send_text(self, pane_id: str, text: str) -> None:
        """Type `text` literally. Never presses Enter. Text with a control character is
        refused (TmuxError), never typed: in a terminal it is a key (core/plain_text.py)."""
        if (why := refusal(text)) is not None:
            raise TmuxError(f"did not type into {pane_id}: {why}")
        if text:
            self._write("send-keys", "-t", pane_id, "-l", text)

    def send_keys(self, pane_id: str, *keys: str) -> None:
        """Press named keys (`Enter`, `Escape`, `C-c`)."""
        self._write("send-keys", "-t", pane_id, *keys)

    def remains_on_exit(self, pane_id: str) -> bool | None:
        """Whether the pane is kept when its process exits (the user's own setting, at any
        level); None when the pane is gone."""
        try:
            result = self.run("display-message", "-p", "-t", pane_id, "#{remain-on-exit}")
        except TmuxError:
            return None
        return result.stdout.strip() in ("on", "failed") if result.ok else None

    def set_remain_on_exit(self, pane_id: str, on: bool = True) -> None:
        """Keep the pane after its process exits, so the exit status can be read."""
        self._write("set-option", "-p", "-t", pane_id, "remain-on-exit", "on" if on else "off")

    def respawn(self, pane_id: str, argv: Sequence[str], cwd: str | None = None,
                env: Mapping[str, str] | None = None, kill: bool = False) -> None:
        """Run `argv` in the dead pane `pane_id`, in `cwd`, with `env` on top of the session's
        environment (PATH included, see the module docstring). A pane whose process still runs
        is refused with TmuxError unless `kill` is set: respawning kills what runs there, and
        that must never be a user's shell by accident. The values travel on the tmux client's
        command line for the few milliseconds it runs (never into Pitcrew's log)."""
        args = ["respawn-pane", "-t", pane_id]
        if kill:
            args.append("-k")
        if cwd:
            args += ["-c", cwd]
        for key, value in (env or {}).items():
            args += ["-e", f"{key}={value}"]
        self._write(*args, *argv, path=(env or {}).get("PATH"))

    def new_session(
        self, name: str, argv: Sequence[str], cwd: str, width: int = 200, height: int = 50,
        env: dict[str, str] | None = None,
    ) -> str:
        """Start a detached session running `argv`; returns the new pane's id."""
        args = ["new-session", "-d", "-P", "-F", "#{pane_id}", "-s", name,
                "-x", str(width), "-y", str(height), "-c", cwd]
        for key, value in (env or {}).items():
            args += ["-e", f"{key}={value}"]
        return self._write(*args, *argv).stdout.strip()

    def new_window(
        self, session: str, argv: Sequence[str], cwd: str, name: str | None = None,
        env: dict[str, str] | None = None,
    ) -> str:
        """Open a window in `session` running `argv`; returns the new pane's id."""
        args = ["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", f"={session}:", "-c", cwd]
        if name:
            args += ["-n", name]
        for key, value in (env or {}).items():
            args += ["-e", f"{key}={value}"]
        return self._write(*args, *argv).stdout.strip()

    def kill_pane(self, pane_id: str) -> None:
        self._write("kill-pane", "-t", pane_id)

    # -- clients and focus (added for supervisor/focus.py) ----------------------------

    def list_clients(self) -> list[ClientInfo]:
        """Every client attached to this server, most recently active first; [] when none."""
        clients = []
        for line in self._rows(CLIENT_FIELDS, "list-clients"):
            parts = line.split(SEP)
            if len(parts) == len(CLIENT_FIELDS):
                f = dict(zip(CLIENT_FIELDS, parts, strict=True))
                clients.append(ClientInfo(f["client_name"], f["client_tty"],
                                          f["client_session"], f["pane_id"],
                                          _int(f["client_activity"]),
                                          f["client_control_mode"] == "1"))
        return sorted(clients, key=lambda c: c.activity, reverse=True)

    def focus_client(self, client: str, session: str, pane_id: str) -> None:
        """Show `pane_id` (in `session`) on `client`: switch session, window, then pane."""
        self._write("switch-client", "-c", client, "-t", f"={session}", ";",
                    "select-window", "-t", pane_id, ";", "select-pane", "-t", pane_id)

    def attach_argv(self, session: str, pane_id: str) -> list[str]:
        """The command a new terminal runs to attach to `session` showing `pane_id`."""
        return [*self._base(), "attach-session", "-t", f"={session}", ";",
                "select-window", "-t", pane_id, ";", "select-pane", "-t", pane_id]


CLIENT_FIELDS = ("client_name", "client_tty", "client_session", "pane_id", "client_activity",
                 "client_control_mode")


@dataclass(frozen=True, slots=True)
class ClientInfo:
    """A terminal attached to the server, and the pane it shows right now."""

    name: str
    tty: str
    session: str
    pane_id: str
    activity: int                 # epoch seconds of its last input (its start, before any)
    control: bool = False         # a control-mode client (Pitcrew's own watchers are)
