"""Planning a restore: from the fleet record and what the tmux server has now, what to create,
what to start and what to type. Pure; `service/restoring.py` carries a plan out.

Rules
-----
1. A window whose place (session name + window index) exists on the server is left alone,
   whatever runs in it: running a restore twice creates nothing and types nothing.
2. A missing window is created whole: in its session (created first when missing, with that
   window), with its name, every pane in its folder, then its recorded layout.
3. Each agent is started the way it was launched, with its own session id (the CLI's
   `resume.by_id` from its provider file, run with the agent's own program):
   * shell-launched: the pane runs a fresh interactive shell of the same kind; the resume
     command is typed there once it is at its prompt;
   * the pane's own command: the pane runs the resume command.
   Either way the agent's recorded environment is given to the pane by tmux (`-e`), never
   typed, and nothing read from a screen is typed: the command is built from the provider file
   and the recorded id only, and an id that does not look like one of the CLI's
   (`[sessions] id_pattern`) is never used.
4. An agent with no usable session id, or whose CLI cannot resume by id, is started fresh in
   its folder and listed as "started fresh"; an agent of a CLI Pitcrew no longer knows is not
   started (its pane gets a shell), and listed with why.
5. Only an agent that was mid-task and is resumed in its own session gets the continue
   message (once: the plan holds one per agent); an idle agent comes back idle.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pitcrew.supervisor.core.fleet import AgentPlace, WindowPlace
from pitcrew.supervisor.core.rules import Command


@dataclass(frozen=True, slots=True)
class CliCommands:
    """What the planner needs of one provider file."""

    launch: Command
    resume_by_id: Command | None
    id_pattern: str
    display: str = ""


@dataclass(frozen=True, slots=True)
class AgentStep:
    agent: AgentPlace
    window: WindowPlace
    argv: tuple[str, ...]       # starts the agent (typed, or the pane's command)
    typed: bool                 # typed at the pane's fresh shell (a shell-launched agent)
    resumed: bool               # in its own session (False: started fresh)
    cont: bool                  # gets the continue message once it is ready
    why_fresh: str = ""

    @property
    def target(self) -> str:
        return f"{self.window.target}.{self.agent.pane}"


@dataclass(frozen=True, slots=True)
class PaneStep:
    index: int
    cwd: str
    argv: tuple[str, ...] = ()          # (): the session's default shell
    env: Mapping[str, str] = field(default_factory=dict)
    agent: AgentStep | None = None


@dataclass(frozen=True, slots=True)
class WindowStep:
    window: WindowPlace
    new_session: bool                   # its session is created with this window
    panes: tuple[PaneStep, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    windows: tuple[WindowStep, ...] = ()
    left_alone: tuple[WindowPlace, ...] = ()          # their place exists already
    not_started: tuple[tuple[AgentPlace, WindowPlace, str], ...] = ()   # (…, why)

    @property
    def agents(self) -> tuple[AgentStep, ...]:
        return tuple(p.agent for w in self.windows for p in w.panes if p.agent is not None)

    @property
    def empty(self) -> bool:
        return not self.windows


def plan(recorded: Iterable[WindowPlace], sessions: Iterable[str],
         windows: Iterable[tuple[str, int]], commands: Mapping[str, CliCommands],
         only: Iterable[str] = ()) -> Plan:
    """The plan for the `recorded` windows (only those of the sessions in `only`, when given)
    on a server that has `sessions` and `windows` ((session, index) pairs) now."""
    have_sessions, have_windows = set(sessions), set(windows)
    wanted = set(only)
    steps: list[WindowStep] = []
    left: list[WindowPlace] = []
    not_started: list[tuple[AgentPlace, WindowPlace, str]] = []
    for win in sorted(recorded, key=lambda w: (w.session, w.index)):
        if wanted and win.session not in wanted:
            continue
        if win.place in have_windows:
            left.append(win)
            continue
        agents = {a.pane: a for a in win.agents}
        panes = []
        for pane in win.panes:
            agent = agents.get(pane.index)
            if agent is None:
                panes.append(PaneStep(pane.index, pane.cwd))
                continue
            cli = commands.get(agent.provider)
            if cli is None:
                not_started.append((agent, win, f"Pitcrew does not know the CLI "
                                                f"{agent.provider!r} any more"))
                panes.append(PaneStep(pane.index, agent.launch.cwd or pane.cwd))
                continue
            panes.append(_agent_pane(win, pane.index, pane.cwd, agent, cli))
        steps.append(WindowStep(win, win.session not in have_sessions, tuple(panes)))
        have_sessions.add(win.session)
        have_windows.add(win.place)
    return Plan(tuple(steps), tuple(left), tuple(not_started))


def _agent_pane(win: WindowPlace, index: int, cwd: str, agent: AgentPlace,
                cli: CliCommands) -> PaneStep:
    launch = agent.launch
    sid = agent.session_id
    why = ""
    if cli.resume_by_id is None:
        why = "its CLI cannot resume a session by id"
    elif not sid:
        why = "no session id was recorded for it"
    elif not re.fullmatch(cli.id_pattern, sid):
        why = "its recorded session id does not look like one of this CLI's"
    if why or cli.resume_by_id is None or sid is None:
        tail = cli.launch.render()[1:]
        resumed = False
    else:
        tail = cli.resume_by_id.render(session_id=sid)[1:]
        resumed = True
    argv = (*launch.program, *tail)
    typed = launch.style == "shell"
    step = AgentStep(agent, win, argv, typed, resumed, cont=resumed and agent.mid_task,
                     why_fresh=why)
    pane_argv = (launch.shell or "sh",) if typed else argv
    return PaneStep(index, launch.cwd or cwd, pane_argv, dict(launch.env), step)
