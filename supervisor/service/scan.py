"""Finding every agent terminal on a tmux server and reading what it shows.

A terminal is a pane whose process tree holds a provider's agent process — or a dead pane
(kept by `remain-on-exit`) whose start command names one. For each, the agent's pid and cwd
come from psutil, the session id from the CLI's own files, and the state from the local
classifier over the captured screen. A pane that vanishes between the listing and the capture
is simply absent from the result.

`find_terminal` turns what a user types (`%3`, `work:1.0`, `work`, `default:%3`) into one
of these terminals, against the live server; `pitcrew send` and `pitcrew seat bind` both use
it, so what `pitcrew status` prints is what they accept. It imports no part of the loop, and
what only a pane needs (psutil, session files, the classifier) when a pane is looked at:
`pitcrew status` with no tmux server, or no agent, starts without them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pitcrew.supervisor.adapters.tmux import PaneInfo, Tmux
from pitcrew.supervisor.core.errors import PitcrewError
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.providers.model import Provider


@dataclass(frozen=True, slots=True)
class Terminal:
    server: str
    pane_id: str
    target: str
    provider: str
    display_name: str
    agent_pid: int | None
    cwd: str
    session_id: str | None
    session_file: str | None
    dead: bool
    dead_status: int | None
    screen: Classification | None
    host: str = "local"           # the machine it runs on (core/hosts.py)

    @property
    def state(self) -> str:
        return self.screen.state.value if self.screen else ScreenState.UNKNOWN.value

    def to_json(self) -> dict[str, object]:
        where = {} if self.host == "local" else {"host": self.host}   # local rows as before
        return {
            **where,
            "server": self.server,
            "pane": self.pane_id,
            "target": self.target,
            "provider": self.provider,
            "display_name": self.display_name,
            "agent_pid": self.agent_pid,
            "cwd": self.cwd,
            "session_id": self.session_id,
            "session_file": self.session_file,
            "dead": self.dead,
            "dead_status": self.dead_status,
            "screen": self.screen.to_json() if self.screen else None,
        }


def scan(
    tmux: Tmux,
    providers: Iterable[Provider],
    now: dt.datetime,
    local: dt.tzinfo,
    read_screens: bool = True,
) -> list[Terminal]:
    plist = list(providers)
    found = []
    for pane in tmux.list_panes():
        terminal = inspect_pane(tmux, pane, plist, now, local, read_screens)
        if terminal is not None:
            found.append(terminal)
    return found


def inspect_pane(
    tmux: Tmux,
    pane: PaneInfo,
    providers: list[Provider],
    now: dt.datetime,
    local: dt.tzinfo,
    read_screens: bool = True,
) -> Terminal | None:
    from pitcrew.supervisor.adapters import processes  # psutil: once there is a pane

    agent = None
    env: dict[str, str] | None = None
    if pane.dead:
        provider = processes.provider_for_command(pane.start_command, providers)
        cwd = pane.current_path or pane.start_path
    else:
        match = processes.find_agent(processes.process_tree(pane.pid), providers)
        if match is None:
            return None
        provider, agent = match
        cwd = agent.cwd or pane.current_path
        env = processes.environ(agent.pid) or None  # the agent's HOME / config-dir overrides
    if provider is None:
        return None
    from pitcrew.supervisor.adapters import sessions  # once there is an agent
    from pitcrew.supervisor.core.classifier import classify

    ref = None
    if cwd:
        home = Path(env["HOME"]) if env and env.get("HOME") else None
        ref = sessions.find_session(
            provider.sessions, cwd, home=home, environ=env,
            newer_than=agent.create_time if agent else None,
        )
    screen = None
    if read_screens:
        # a dying pane's last screen is scrolled into history above tmux's "Pane is dead" line
        text = tmux.capture(pane.pane_id, history=pane.height if pane.dead else 0)
        if text is None:
            return None  # the pane went away while we looked
        screen = classify(text, provider.screen, now, local)
    return Terminal(
        server=tmux.label,
        pane_id=pane.pane_id,
        target=pane.target,
        provider=provider.name,
        display_name=provider.display_name,
        agent_pid=agent.pid if agent else None,
        cwd=cwd,
        session_id=ref.session_id if ref else None,
        session_file=ref.path if ref else None,
        dead=pane.dead,
        dead_status=pane.dead_status,
        screen=screen,
    )


class NoSuchTerminal(PitcrewError):
    """The reference names no agent terminal on the server (or names several)."""


def terminal_key(server: str, pane_id: str) -> str:
    """The key the supervisor watches a terminal under (`<server>:%3`)."""
    return f"{server}:{pane_id}"


def match_terminal(ref: str, server: str, terminals: Iterable[Terminal]) -> list[Terminal]:
    """The terminals `ref` names: a pane id (`%3`), a terminal key (`<server>:%3`), a tmux
    target (`session:window.pane`, `session:window`) or a session (`work`). Pure."""
    found = list(terminals)
    head, sep, pane = ref.rpartition(":")
    if ref.startswith("%"):
        return [t for t in found if t.pane_id == ref]
    if sep and pane.startswith("%"):
        return [t for t in found if head == server and t.pane_id == pane]
    exact = [t for t in found if t.target == ref]
    if exact:
        return exact
    return [t for t in found if t.target.startswith(f"{ref}.")
            or (":" not in ref and t.target.partition(":")[0] == ref)]


def key_for_later(ref: str, server: str) -> str | None:
    """For a terminal that is not there yet: the key `ref` will have, if it names a pane
    (`%3`, `<server>:%3`); a tmux target cannot be known before its pane exists."""
    head, sep, pane = ref.rpartition(":")
    if ref.startswith("%") and ref[1:].isdigit():
        return terminal_key(server, ref)
    if sep and head == server and pane.startswith("%") and pane[1:].isdigit():
        return ref
    return None


def find_terminal(tmux: Tmux, providers: Iterable[Provider], ref: str) -> Terminal:
    """The one agent terminal `ref` names on the live server; raises NoSuchTerminal with the
    one line to show the user. Screens are not read: only who is where."""
    if not tmux.server_alive():
        raise NoSuchTerminal(f"no agent terminal {ref}: no tmux server is running "
                             f"({tmux.label})")
    found = scan(tmux, providers, dt.datetime.now(dt.UTC), dt.UTC, read_screens=False)
    hits = match_terminal(ref, tmux.label, found)
    if not hits:
        raise NoSuchTerminal(f"no agent terminal {ref} on tmux server {tmux.label} "
                             "(see `pitcrew status`)")
    if len(hits) > 1:
        raise NoSuchTerminal(f"{ref} names {len(hits)} agent terminals ("
                             f"{', '.join(f'{t.target} {t.pane_id}' for t in hits)}); "
                             "name one by its pane id")
    return hits[0]
