"""Windows and sessions on a tmux server: reading their layout and making them again (for the
fleet record and `pitcrew restore`). Every call goes through `Tmux.run`, the one place that
runs tmux.

Contract: reads are lenient (no server: empty); writes raise `TmuxError` with tmux's message.
A pane is always made with the session's default shell in its folder; what an agent pane runs
is given by `respawn()` afterwards (`Tmux.respawn`: its environment with `-e`, its PATH as the
client's). So no agent's environment is ever set on a session (where `new-session -e` would
put it, for every later pane of that session to inherit).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pitcrew.supervisor.adapters.tmux import SEP, Tmux
from pitcrew.supervisor.core.errors import TmuxError, TmuxNotFound, TmuxTimeout

_SIZE = re.compile(r"^[0-9a-f]{4},(\d+)x(\d+),")


class Places:
    def __init__(self, tmux: Tmux) -> None:
        self.tmux = tmux

    @property
    def label(self) -> str:
        return self.tmux.label

    def ident(self) -> str | None:
        """The running server's identity, "<pid>@<start time>" (None: no server)."""
        found = self.tmux.server_identity()
        return None if found is None else f"{found.pid}@{found.started}"

    def layouts(self) -> dict[tuple[str, int], str]:
        """Each window's layout string by (session name, window index)."""
        out: dict[tuple[str, int], str] = {}
        for row in self._rows("list-windows", "-a", "-F", SEP.join((
                "#{session_name}", "#{window_index}", "#{window_layout}"))):
            parts = row.split(SEP)
            if len(parts) == 3 and parts[1].isdigit():
                out[(parts[0], int(parts[1]))] = parts[2]
        return out

    def windows(self) -> tuple[set[str], set[tuple[str, int]]]:
        """The server's sessions, and its windows as (session name, index)."""
        sessions = set(self._rows("list-sessions", "-F", "#{session_name}"))
        return sessions, set(self.layouts())

    def new_session(self, name: str, window: str, cwd: str, layout: str) -> tuple[str, int]:
        """A detached session with one window (its default shell in `cwd`), as big as
        `layout` says its window was; its pane's id and the window's index."""
        size = _SIZE.match(layout)
        width, height = (size.group(1), size.group(2)) if size else ("200", "50")
        out = self._write("new-session", "-d", "-P", "-F", f"#{{pane_id}}{SEP}#{{window_index}}",
                          "-s", name, "-n", window, "-c", cwd, "-x", width, "-y", height)
        pane, _, index = out.strip().partition(SEP)
        return pane, int(index)

    def move_window(self, session: str, old: int, new: int) -> None:
        self._write("move-window", "-s", f"={session}:{old}", "-t", f"={session}:{new}")

    def new_window(self, session: str, index: int, name: str, cwd: str) -> str:
        return self._write("new-window", "-d", "-P", "-F", "#{pane_id}", "-t",
                           f"={session}:{index}", "-n", name, "-c", cwd).strip()

    def split(self, pane_id: str, cwd: str) -> str:
        return self._write("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", pane_id,
                           "-c", cwd).strip()

    def select_layout(self, session: str, index: int, layout: str) -> bool:
        """Whether tmux took the layout (a layout for another pane count is refused)."""
        try:
            return self.tmux.run("select-layout", "-t", f"={session}:{index}", layout).ok
        except TmuxError:
            return False

    def respawn(self, pane_id: str, argv: Sequence[str], cwd: str,
                env: Mapping[str, str]) -> None:
        """Replace the fresh shell of a pane just made with `argv`, in `cwd`, with `env`."""
        self.tmux.respawn(pane_id, argv, cwd=cwd, env=env, kill=True)

    def pane_pid(self, pane_id: str) -> int | None:
        pane = self.tmux.pane(pane_id)
        return None if pane is None or pane.dead else pane.pid

    def type_line(self, pane_id: str, text: str) -> None:
        self.tmux.send_text(pane_id, text)
        self.tmux.send_keys(pane_id, "Enter")

    def _rows(self, *args: str) -> list[str]:
        try:
            result = self.tmux.run(*args)
        except (TmuxNotFound, TmuxTimeout):
            raise
        except TmuxError:
            return []
        return result.stdout.splitlines() if result.ok else []

    def _write(self, *args: str) -> str:
        result = self.tmux.run(*args)
        if not result.ok:
            raise TmuxError(f"tmux {args[0]} failed on server {self.label}: {result.stderr}")
        return result.stdout
