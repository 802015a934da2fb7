"""`pitcrew status` for a remote host: its agent terminals, read over one ssh connection.

The same questions `service/scan.py` answers locally — which panes run an agent, its pid,
cwd and session id, and what its screen shows — asked of the host through its link: one
`list-panes`, one `ps`, then per agent pane a `readlink`, its environment, a `find`/`head`
for the session file and a capture. The screen is classified here, locally.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, replace

from pitcrew.supervisor.adapters import processes
from pitcrew.supervisor.adapters.remote_procs import RemoteProcs
from pitcrew.supervisor.adapters.remote_sessions import RemoteSessions
from pitcrew.supervisor.adapters.ssh import RemoteTmux
from pitcrew.supervisor.core.classifier import classify
from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.providers.model import Provider
from pitcrew.supervisor.service.scan import Terminal


@dataclass(frozen=True, slots=True)
class HostScan:
    host: str
    state: str                      # "up" | "down"
    terminals: tuple[Terminal, ...] = ()
    error: str = ""
    server_running: bool = True

    def to_json(self) -> dict[str, object]:
        return {"name": self.host, "state": self.state, "error": self.error or None,
                "server_running": self.server_running}


def scan_remote(tmux: RemoteTmux, providers: Iterable[Provider], now: dt.datetime,
                local: dt.tzinfo, read_screens: bool = True) -> HostScan:
    """Every agent terminal on the host's tmux server; a failed link is a `down` result."""
    host = tmux.label
    plist = list(providers)
    procs, files = RemoteProcs(tmux.link), RemoteSessions(tmux.link)
    try:
        if not tmux.run("list-sessions", "-F", "#{session_id}").ok:   # a lost link raises
            return HostScan(host, "up", server_running=False)
        panes = tmux.list_panes()
        procs.refresh()
        found = []
        for pane in panes:
            if pane.dead:
                provider = processes.provider_for_command(pane.start_command, plist)
                agent, env, cwd = None, {}, pane.current_path or pane.start_path
            else:
                match = procs.find_agent(pane.pid, plist)
                if match is None:
                    continue
                provider, agent = match
                env = procs.environ(agent.pid)
                cwd = agent.cwd or pane.current_path
            if provider is None:
                continue
            ref = files.find_session(provider.sessions, cwd, env,
                                     agent.create_time if agent else None) if cwd else None
            screen = None
            if read_screens:
                text = tmux.capture(pane.pane_id, history=pane.height if pane.dead else 0)
                if text is None:
                    continue
                screen = classify(text, provider.screen, now, local)
            found.append(Terminal(
                server=host, pane_id=pane.pane_id, target=f"{host}:{pane.target}",
                provider=provider.name, display_name=provider.display_name,
                agent_pid=agent.pid if agent else None, cwd=cwd,
                session_id=ref.session_id if ref else None,
                session_file=ref.path if ref else None, dead=pane.dead,
                dead_status=pane.dead_status, screen=screen))
    except TmuxError as exc:
        return HostScan(host, "down", error=str(exc))
    return HostScan(host, "up", tuple(replace(t, host=host) for t in found))
