"""Carrying out the core's actions against the real world (tmux, processes, files, notifier).

Before typing anything, the screen is read once more: if the input box is not empty, or a
question or picker is up, nothing is typed and the decision is recorded as skipped. Text and
Enter are sent separately, a moment apart (some CLIs take an Enter that arrives with a paste
as a newline). A relaunch respawns the pane when the agent was the pane's own process, and
otherwise stops the agent and types the resume command at the shell it ran from.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import shlex
import signal
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import psutil

from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.core.records import (
    Action,
    Badge,
    Notify,
    Record,
    Relaunch,
    SwitchToBackup,
    TypeText,
    Wake,
)
from pitcrew.supervisor.core.screen import ScreenState

if TYPE_CHECKING:
    from pitcrew.supervisor.service.loop import Supervisor
    from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")

ENTER_GAP = 0.4          # seconds between typed text and its Enter
SHELLS = frozenset({"bash", "zsh", "fish", "sh", "dash", "ksh", "tcsh", "csh", "nu", "pwsh"})
UNSAFE_TO_TYPE = frozenset({ScreenState.DRAFT, ScreenState.QUESTION, ScreenState.PICKER,
                            ScreenState.LOGIN_REQUIRED})
KEEP_ENV = ("PATH",)     # passed explicitly on respawn: tmux would use its client's instead


class Executor:
    def __init__(self, sup: Supervisor) -> None:
        self.sup = sup

    def run(self, w: Watched, action: Action) -> None:
        try:
            match action:
                case TypeText():
                    self.type_text(w, action)
                case Relaunch():
                    self.relaunch(w, action)
                case Wake(at=at):
                    self.wake(w, at)
                case Notify():
                    self.sup.gate.offer(Message(action.title, action.body, action.key, w.key))
                case Record(decision=decision):
                    self.sup.ledger.append(decision)
                    log.info("%s: %s — %s", w.key, decision.badge.value, decision.reason)
                case SwitchToBackup(reason=reason):
                    self.sup.seats.fail_over(w, reason)
        except (TmuxError, OSError) as exc:
            log.error("%s: could not %s: %s", w.key, type(action).__name__, exc)

    def wake(self, w: Watched, at: float) -> None:
        from pitcrew.supervisor.service.loop import Wakeup

        self.sup.scheduler.add_job(
            self.sup.post, "date", run_date=dt.datetime.fromtimestamp(at, dt.UTC),
            args=[Wakeup(w.key)], id=f"wake:{w.key}", replace_existing=True,
            misfire_grace_time=None,
        )

    def type_text(self, w: Watched, action: TypeText) -> None:
        screen, alive = self.sup.read_now(w)
        state = getattr(screen, "state", ScreenState.UNKNOWN)
        if not alive or state in UNSAFE_TO_TYPE or state is ScreenState.BUSY:
            self.skip(w, f"did not type: the screen shows {state.value}")
            return
        tmux = self.sup.tmux
        tmux.send_text(w.pane_id, action.text)
        time.sleep(ENTER_GAP)
        tmux.send_keys(w.pane_id, "Enter")
        w.typed_at, w.typed_text = time.monotonic(), action.text
        log.info("%s: typed %s message", w.key, action.kind.value)

    def skip(self, w: Watched, reason: str) -> None:
        from pitcrew.supervisor.core.records import Decision

        inc = w.state.incident
        self.sup.ledger.append(Decision(
            Badge.SKIPPED, self.sup.clock(), w.state.terminal, w.state.agent,
            inc.prompt if inc else (w.state.task or ""), w.state.project,
            inc.trigger if inc else "", reason, inc.attempts if inc else 0, {}))
        log.info("%s: %s", w.key, reason)

    def relaunch(self, w: Watched, action: Relaunch) -> None:
        tmux = self.sup.tmux
        pane = tmux.pane(w.pane_id)
        if pane is None:
            log.warning("%s: the pane is gone; cannot relaunch", w.key)
            return
        agent_env = _agent_env(w)
        own_process = pane.dead or w.agent_pid in (None, pane.pid)
        if action.kill_first and w.agent_pid is not None:
            stop_tree(w.agent_pid)
            pane = tmux.pane(w.pane_id) or pane
        argv = list(action.argv)
        if own_process or pane.dead or pane.current_command not in SHELLS:
            if "PATH" in agent_env:
                argv = ["env", f"PATH={agent_env['PATH']}", *argv]
            tmux.set_remain_on_exit(w.pane_id)
            tmux.respawn(w.pane_id, argv, cwd=w.cwd)
        else:
            tmux.send_text(w.pane_id, shlex.join(argv))
            time.sleep(ENTER_GAP)
            tmux.send_keys(w.pane_id, "Enter")
        w.agent_pid = None
        w.state = replace(w.state)   # generation already bumped by the core
        log.info("%s: relaunched %s (generation %d)", w.key, shlex.join(action.argv),
                 action.generation)
        from pitcrew.supervisor.service.loop import Rescan

        for delay in (0.3, 1.0, 2.5, 5.0, 10.0):   # look for the new process soon
            self.sup.scheduler.add_job(self.sup.post, "date",
                                       run_date=dt.datetime.now(dt.UTC)
                                       + dt.timedelta(seconds=delay),
                                       args=[Rescan(w.pane_id)])


def _agent_env(w: Watched) -> dict[str, str]:
    from pitcrew.supervisor.adapters import processes

    env = processes.environ(w.agent_pid) if w.agent_pid else {}
    return {k: v for k, v in env.items() if k in KEEP_ENV}


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
