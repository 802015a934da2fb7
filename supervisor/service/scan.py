"""Finding every agent terminal on a tmux server and reading what it shows.

A terminal is a pane whose process tree holds a provider's agent process — or a dead pane
(kept by `remain-on-exit`) whose start command names one. For each, the agent's pid and cwd
come from psutil, the session id from the CLI's own files, and the state from the local
classifier over the captured screen. A pane that vanishes between the listing and the capture
is simply absent from the result.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pitcrew.supervisor.adapters import processes, sessions
from pitcrew.supervisor.adapters.tmux import PaneInfo, Tmux
from pitcrew.supervisor.core.classifier import classify
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

    @property
    def state(self) -> str:
        return self.screen.state.value if self.screen else ScreenState.UNKNOWN.value

    def to_json(self) -> dict[str, object]:
        return {
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
