"""Bring an agent's pane in front of the user ("Open terminal").

When a terminal is already attached to the pane's tmux server, that client is switched to the
pane (session, window, pane), so the user's own window shows it. Otherwise a terminal
emulator is started, attached to the pane's session with the pane selected. The emulator is
spawned detached (its own session) and never waited for: closing Pitcrew leaves it open.

Which emulator (Linux and other X11/Wayland systems): `$TERMINAL`, then the first found of
`EMULATORS`. On macOS Terminal.app is asked through osascript.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from pitcrew.supervisor.adapters.tmux import Tmux
from pitcrew.supervisor.core.errors import PitcrewError, TmuxError

log = logging.getLogger(__name__)

# How each emulator is told to run a command (argv appended after these words).
EMULATORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("x-terminal-emulator", ("-e",)),
    ("gnome-terminal", ("--",)),
    ("konsole", ("-e",)),
    ("kitty", ()),
    ("alacritty", ("-e",)),
    ("wezterm", ("start", "--")),
    ("foot", ()),
    ("xfce4-terminal", ("-x",)),
    ("xterm", ("-e",)),
)
_RUN_FLAG = dict(EMULATORS)


def open_terminal(tmux: Tmux, pane_id: str, environ: Mapping[str, str] | None = None) -> str:
    """Show `pane_id` to the user; returns one line saying how. Raises PitcrewError when the
    pane is gone or no terminal can be found or started."""
    env = dict(os.environ if environ is None else environ)
    pane = tmux.pane(pane_id)
    if pane is None:
        raise PitcrewError(f"pane {pane_id} is not on tmux server {tmux.label} any more")
    # a person's terminal, never a control-mode client: Pitcrew's own watchers attach one per
    # session and, having typed nothing since they started, are often the "most recent"
    clients = [c for c in tmux.list_clients() if not c.control]
    if clients:
        client = clients[0]
        try:
            tmux.focus_client(client.name, pane.session_name, pane_id)
        except TmuxError as exc:
            raise PitcrewError(f"could not switch tmux client {client.name} to "
                               f"{pane.target}: {exc}") from None
        how = f"switched tmux client {client.name} to {pane.target} ({pane_id})"
        log.info("%s", how, extra={"pitcrew_terminal": pane_id})
        return how
    command = tmux.attach_argv(pane.session_name, pane_id)
    argv = _mac_argv(command) if sys.platform == "darwin" else terminal_argv(command, env)
    try:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, cwd=pane.current_path or None)
    except OSError as exc:
        raise PitcrewError(f"could not start the terminal {argv[0]!r}: {exc}") from None
    # Never waited for by the caller; this thread only reaps it when it exits (no zombie).
    threading.Thread(target=proc.wait, name="pitcrew-terminal-reaper", daemon=True).start()
    how = f"opened {Path(argv[0]).name} attached to {pane.target} ({pane_id})"
    log.info("%s", how, extra={"pitcrew_terminal": pane_id})
    return how


def terminal_argv(command: Sequence[str], environ: Mapping[str, str]) -> list[str]:
    """The argv that opens a terminal emulator running `command` (X11/Wayland desktops)."""
    path = environ.get("PATH", os.defpath)
    chosen = environ.get("TERMINAL", "").strip()
    if chosen:
        words = shlex.split(chosen)
        exe = shutil.which(words[0], path=path)
        if exe is None:
            raise PitcrewError(f"$TERMINAL is {chosen!r}, which is not an installed program")
        flag = _RUN_FLAG.get(Path(words[0]).name, ("-e",))
        return [exe, *words[1:], *flag, *command]
    for name, flag in EMULATORS:
        exe = shutil.which(name, path=path)
        if exe is not None:
            return [exe, *flag, *command]
    raise PitcrewError(
        "no terminal emulator found (tried $TERMINAL, "
        + ", ".join(name for name, _ in EMULATORS)
        + "); set TERMINAL or attach yourself: " + shlex.join(command))


def _mac_argv(command: Sequence[str]) -> list[str]:
    """Terminal.app runs `command` in a new window and comes to the front (untested)."""
    script = shlex.join(command).replace("\\", "\\\\").replace('"', '\\"')
    return ["osascript", "-e", f'tell application "Terminal" to do script "{script}"',
            "-e", 'tell application "Terminal" to activate']
