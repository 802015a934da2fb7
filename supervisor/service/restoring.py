"""Carrying out a restore plan (core/restore_plan.py) on a tmux server, and saying what it
does (`describe`, for `--dry-run` and before doing it).

Order, per window: the session (when missing) or the window, each pane with the session's
default shell in its folder, then the recorded layout; then each agent pane is respawned with
what starts it and its own environment (tmux's `-e`, never typed): the resume command
itself, or, for an agent that was started from a shell, a fresh shell of that kind, at which
the resume command is typed once the shell waits at its prompt. A shell that does not get
there within SHELL_WAIT seconds is not typed into (the row says so).

Who types the continue, and why: restore does not type it. It queues it, once per mid-task
agent, as a delivery for the agent's new terminal (`queue_continue`: the command spool that
`pitcrew send` uses), and the running watcher types it when the agent is ready for input, as
it types any message: one id, typed once (the ledger records it and a replay skips it), never
over a busy agent, a dialog or a draft, confirmed and retried. Typing it here would mean a
second, weaker copy of that machinery (when is a just-resumed agent ready?), and a watcher
started later would not know it was already typed. A restore with no watcher running leaves
the continue queued for the next one.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.core.fleet import WindowPlace
from pitcrew.supervisor.core.records import Badge, Decision
from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from pitcrew.supervisor.core.restore_plan import AgentStep, CliCommands, Plan, WindowStep, plan
from pitcrew.supervisor.providers.model import Provider
from pitcrew.supervisor.service.ports import LedgerPort

log = logging.getLogger("pitcrew")

SHELL_WAIT = 15.0     # seconds a fresh shell may take to reach its prompt
POLL = 0.1


class PlacesPort(Protocol):
    @property
    def label(self) -> str: ...
    def new_session(self, name: str, window: str, cwd: str, layout: str) -> tuple[str, int]: ...
    def move_window(self, session: str, old: int, new: int) -> None: ...
    def new_window(self, session: str, index: int, name: str, cwd: str) -> str: ...
    def split(self, pane_id: str, cwd: str) -> str: ...
    def select_layout(self, session: str, index: int, layout: str) -> bool: ...
    def respawn(self, pane_id: str, argv: Sequence[str], cwd: str,
                env: Mapping[str, str]) -> None: ...
    def pane_pid(self, pane_id: str) -> int | None: ...
    def type_line(self, pane_id: str, text: str) -> None: ...
    def windows(self) -> tuple[set[str], set[tuple[str, int]]]: ...


@dataclass(frozen=True, slots=True)
class Restored:
    step: AgentStep
    terminal: str             # "<server>:<pane id>"
    started: bool
    detail: str = ""


def commands_of(providers: Iterable[Provider]) -> dict[str, CliCommands]:
    """What the planner needs of each provider file."""
    return {p.name: CliCommands(p.launch.argv, p.resume.by_id, p.sessions.id_pattern,
                                p.display_name) for p in providers}


def plan_for(windows: Iterable[WindowPlace], places: PlacesPort,
             providers: Iterable[Provider], only: Iterable[str] = ()) -> Plan:
    """The plan for `windows` against what the server has now."""
    sessions, have = places.windows()
    return plan(windows, sessions, have, commands_of(providers), only)


def at_start(mode: str, windows: Sequence[WindowPlace], places: PlacesPort,
             providers: Iterable[Provider], restorer: Callable[[], Restorer]) -> int:
    """What the watcher does at its start with agents from before a restart that the server
    lacks (`[watch] restore`): "off" nothing, "ask" one line, "auto" restore them. Returns
    how many agents there were."""
    if mode == "off" or not windows:
        return 0
    todo = plan_for(windows, places, providers)
    count = len(todo.agents)
    if not count:
        return 0
    if mode == "ask":
        log.info("%d agent%s from before the restart can be restored: pitcrew restore",
                 count, "" if count == 1 else "s")
        return count
    log.info("restoring %d agent%s from before the restart (restore = \"auto\"):", count,
             "" if count == 1 else "s")
    for line in describe(todo):
        log.info("  %s", line)
    restorer().carry_out(todo)
    return count


def describe(plan: Plan) -> list[str]:
    """The plan in words: which sessions, windows and agents, and what is typed."""
    lines: list[str] = []
    for win in plan.windows:
        w = win.window
        made = "new session" if win.new_session else "new window"
        lines.append(f"{w.target} ({made}, window {w.name!r}, {len(win.panes)} pane"
                     f"{'s' if len(win.panes) != 1 else ''})")
        for pane in win.panes:
            step = pane.agent
            if step is None:
                lines.append(f"  pane {pane.index}: a shell in {pane.cwd}")
                continue
            how = ("in its own session " + str(step.agent.session_id) if step.resumed
                   else f"started fresh ({step.why_fresh})")
            lines.append(f"  pane {pane.index}: {step.agent.agent or step.agent.provider} "
                         f"{how}, in {pane.cwd}")
            if step.typed:
                lines.append(f"    a fresh {pane.argv[0]}, then typed: "
                             f"{shlex.join(step.argv)}")
            else:
                lines.append(f"    runs: {shlex.join(step.argv)}")
            if step.cont:
                lines.append(f"    was mid-task: once it is ready, typed: {CONTINUE_MESSAGE}")
    for agent, place, why in plan.not_started:
        lines.append(f"{place.target}.{agent.pane}: {agent.agent or agent.provider} not "
                     f"started: {why}")
    for w in plan.left_alone:
        lines.append(f"{w.target} ({w.name!r}) exists already: left alone")
    return lines


class Restorer:
    def __init__(self, places: PlacesPort, at_prompt: Callable[[int], bool],
                 queue_continue: Callable[[str, str], None], ledger: LedgerPort,
                 wall: Callable[[], float], mono: Callable[[], float],
                 sleep: Callable[[float], None], trigger: str = "pitcrew restore") -> None:
        self.places, self.at_prompt, self.queue_continue = places, at_prompt, queue_continue
        self.ledger, self.wall, self.mono, self.sleep = ledger, wall, mono, sleep
        self.trigger = trigger

    def carry_out(self, plan: Plan) -> list[Restored]:
        done: list[Restored] = []
        for win in plan.windows:
            try:
                panes = self._window(win)
            except TmuxError as exc:
                log.error("%s: cannot make the window: %s", win.window.target, exc)
                continue
            for pane, pane_id in zip(win.panes, panes, strict=True):
                if pane.agent is not None:
                    done.append(self._agent(pane.agent, pane_id, pane.argv, pane.cwd,
                                            pane.env))
        return done

    def _window(self, win: WindowStep) -> list[str]:
        """Make the window with a shell in each pane's folder; its panes' ids in order."""
        w = win.window
        first = win.panes[0].cwd if win.panes else "/"
        if win.new_session:
            pane, index = self.places.new_session(w.session, w.name, first, w.layout)
            if index != w.index:
                self.places.move_window(w.session, index, w.index)
        else:
            pane = self.places.new_window(w.session, w.index, w.name, first)
        ids = [pane]
        for p in win.panes[1:]:
            ids.append(self.places.split(ids[-1], p.cwd))
        if len(ids) > 1 and w.layout and not self.places.select_layout(
                w.session, w.index, w.layout):
            log.info("%s: tmux did not take the recorded layout; panes left evenly split",
                     w.target)
        return ids

    def _agent(self, step: AgentStep, pane_id: str, argv: tuple[str, ...], cwd: str,
               env: Mapping[str, str]) -> Restored:
        key = f"{self.places.label}:{pane_id}"
        try:
            self.places.respawn(pane_id, argv, cwd, env)
            if step.typed:
                pid = self._wait_for_prompt(pane_id)
                if pid is None:
                    return self._row(step, key, False, f"the fresh {argv[0]} did not reach "
                                     f"its prompt within {SHELL_WAIT:g}s; nothing typed")
                self.places.type_line(pane_id, shlex.join(step.argv))
        except TmuxError as exc:
            return self._row(step, key, False, f"tmux refused: {exc}")
        if step.cont:
            self.queue_continue(key, CONTINUE_MESSAGE)
        return self._row(step, key, True)

    def _wait_for_prompt(self, pane_id: str) -> int | None:
        deadline = self.mono() + SHELL_WAIT
        while self.mono() < deadline:
            pid = self.places.pane_pid(pane_id)
            if pid is not None and self.at_prompt(pid):
                return pid
            self.sleep(POLL)
        return None

    def _row(self, step: AgentStep, key: str, started: bool, detail: str = "") -> Restored:
        a = step.agent
        if not started:
            reason = f"could not start it in {step.target}: {detail}"
        elif step.resumed:
            reason = (f"restored in {step.target} in its own session"
                      + ("; the continue message is queued" if step.cont else ""))
        else:
            reason = f"started fresh in {step.target}: {step.why_fresh}"
        self.ledger.append(Decision(
            Badge.RESTORED if started else Badge.COULDNT_RESUME, self.wall(), key,
            a.agent or a.provider, a.task or "", a.launch.cwd, self.trigger, reason, 0,
            {"session_id": a.session_id, "place": step.target, "style": a.launch.style,
             "resumed": step.resumed, "continue": step.cont and started}))
        log.info("%s (%s): %s", step.target, key, reason)
        return Restored(step, key, started, detail)
