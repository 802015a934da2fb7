"""A manual rerun: the same provider, a fresh session, the task's prompt sent again.

Automatic recovery always resumes the agent's own session (its history is the work done so
far). A rerun is what a person asks for when that session itself is the problem: `pitcrew
rerun TERMINAL` or the *Rerun* button start the same provider **without** the old session id —
in the same pane when the agent there has exited (the way it was started: typed at its shell,
or the pane respawned), in a new window of the same tmux session when the agent still runs
(it is never killed) — and queue the incident's prompt as a delivery (typed once, when the
new agent is ready, confirmed like any message). The old incident is closed: whatever goes
wrong next is a new incident with its own attempt count.

The ledger's *Rerun* row names both sessions. A CLI that takes an id at launch gets one from
Pitcrew, so the row is written at once; otherwise the new id is known only once the agent
has written its session, so the row waits for it (at most WRITE_WITHIN, kept in state.json)
— unless no prompt is sent: an agent given nothing may never write a session, and a rerun
is never a silent half, so that row is written at once.

The prompt is the task's as recorded (the open incident's, the running task's, or — once it
has finished — the last task's). One rerun at a time per terminal: while one is under way
(its prompt not yet taken by the new agent, at most UNDER_WAY seconds), another rerun of the
same terminal, or of the terminal it started, starts nothing and says so (a Skipped row).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from pitcrew.supervisor.adapters.processes import resume_argv
from pitcrew.supervisor.core.brief import UNKNOWN_PROMPT
from pitcrew.supervisor.core.records import Badge, Decision, Relaunch
from pitcrew.supervisor.core.seats import AgentChoice
from pitcrew.supervisor.service.ports import Clock, LedgerPort, Persist, TmuxPort
from pitcrew.supervisor.service.relaunching import Outcome, Relauncher
from pitcrew.supervisor.service.seats import launch_command
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")
WRITE_WITHIN = 120.0     # seconds: the Rerun row waits this long at most for the new session
UNDER_WAY = 120.0        # seconds a rerun counts as under way at most (its prompt not taken)
SETTLING = 15.0          # … and at least (a double click; a new agent sent no prompt)

Queue = Callable[[str, str], object]          # (terminal key, prompt) → queued delivery
Pending = Callable[[str], bool]               # that terminal still has a rerun prompt to take
Running = Callable[[Watched], bool]           # the agent still runs in its pane
Relieve = Callable[[Watched, str], None]      # close the old agent's incident (it stays)
LookAgain = Callable[[str], None]


def load(saved: object) -> dict[str, dict[str, Any]]:
    """Reruns whose row waits for the new session id (state.json); anything odd is dropped."""
    if not isinstance(saved, Mapping):
        return {}
    return {str(k): dict(v) for k, v in saved.items()
            if isinstance(v, Mapping) and isinstance(v.get("at"), (int, float))
            and isinstance(v.get("row"), Mapping)}


class Reruns:
    def __init__(self, watched: Mapping[str, Watched], tmux: TmuxPort, clock: Clock,
                 ledger: LedgerPort, persist: Persist, relauncher: Relauncher, queue: Queue,
                 running: Running, relieve: Relieve, look_again: LookAgain,
                 saved: object = None, prompt_pending: Pending = lambda key: False) -> None:
        self.watched = watched
        self.tmux = tmux
        self.clock = clock
        self.ledger = ledger
        self.persist = persist
        self.relauncher = relauncher
        self.queue = queue
        self.running = running
        self.relieve = relieve
        self.look_again = look_again
        self.pending = load(saved)    # terminal key → {"at", "old", "row": Decision fields}
        self.prompt_pending = prompt_pending
        self.under_way: dict[str, tuple[str, float]] = {}   # key → (the rerun's key, since)

    def to_json(self) -> dict[str, Any]:
        return dict(self.pending)

    def rerun(self, w: Watched) -> str | None:
        """Start `w`'s provider afresh and send the prompt again; the key of the terminal it
        runs in, or None when it could not start (said in the log and a ledger row)."""
        if (why := self._busy(w.key)) is not None:
            self._refused(w, why)
            return None
        inc = w.state.incident
        prompt = (inc.prompt if inc else w.state.task) or w.last_task
        prompt = "" if prompt == UNKNOWN_PROMPT else prompt
        old = w.state.session_id
        argv, pinned = launch_command(w.provider, AgentChoice(w.provider.name))
        if self.running(w):
            key, where = self._new_window(w, argv)
            if key is None:
                return None
            self.relieve(w, f"you asked for a rerun; it runs in {where}")
        else:
            key, where = self._same_pane(w, argv, pinned)
            if key is None:
                return None
        queued = bool(prompt) and self.queue(key, prompt) is not None
        self.under_way[w.key] = self.under_way[key] = (key, self.clock.wall())
        row = {"badge": Badge.RERUN.value, "terminal": w.state.terminal, "agent": w.state.agent,
               "prompt": prompt, "project": w.state.project,
               "reason": f"a fresh session in {where}" + (
                   "; the prompt is sent again" if queued else
                   "; the prompt could not be queued, nothing sent" if prompt else
                   "; no prompt sent: Pitcrew knows no task of this terminal"),
               "readings": {"old_session": old, "new_session": pinned, "where": where,
                            "pane": key.rsplit(":", 1)[-1]}}
        log.info("%s: rerun in %s (was session %s)", w.key, where, old or "unknown")
        if pinned is not None or not queued:
            self._write(row, pinned)     # no prompt: the new agent may never write a session
        else:
            self.pending[key] = {"at": self.clock.wall(), "old": old, "row": row}
        self.persist()
        self.look_again(key.rsplit(":", 1)[-1])
        return key

    def _busy(self, key: str) -> str | None:
        """Why a rerun of `key` must not start now: one is under way (its new agent has not
        taken the prompt yet); None when none is."""
        now = self.clock.wall()
        for old, (new, since) in list(self.under_way.items()):
            if now - since > UNDER_WAY or (now - since > SETTLING and not (
                    self.prompt_pending(new) or new in self.pending)):
                del self.under_way[old]
        if key in self.under_way:
            new, since = self.under_way[key]
            return (f"a rerun of this terminal is under way (in {new.rsplit(':', 1)[-1]}, "
                    f"started {now - since:.0f}s ago); one at a time")
        return None

    def settle(self) -> None:
        """Write the rows whose new session is known now (or waited for long enough)."""
        if not self.pending:
            return
        now = self.clock.wall()
        for key, p in list(self.pending.items()):
            w = self.watched.get(key)
            sid = w.state.session_id if w is not None else None
            if sid is not None and sid != p.get("old"):
                self._write(p["row"], sid)
            elif now - p["at"] > WRITE_WITHIN:
                self._write(p["row"], None)
            else:
                continue
            del self.pending[key]
            self.persist()

    def _write(self, row: dict[str, Any], new_session: str | None) -> None:
        readings = {**row["readings"], "new_session": new_session}
        self.ledger.append(Decision(Badge.RERUN, self.clock.wall(), row["terminal"],
                                    row["agent"], row["prompt"], row["project"],
                                    "rerun (you asked)", row["reason"], 0, readings))

    def _new_window(self, w: Watched, argv: tuple[str, ...]) -> tuple[str | None, str]:
        pane = self.tmux.pane(w.pane_id)
        if pane is None:
            self._refused(w, "the pane is gone")
            return None, ""
        ctx = w.launch     # the agent's own program and environment, as it was started
        host, remote, _ = w.pane_id.rpartition(":")    # `gpu1:%3`: on gpu1, not here
        try:
            new_pane = self.tmux.new_window(
                f"{host}:{pane.session_name}" if remote else pane.session_name,
                resume_argv(ctx, argv) if ctx is not None else argv,
                (ctx.cwd if ctx is not None else "") or w.cwd or ("~" if remote else os.getcwd()),
                name=f"rerun-{w.provider.name}", env=dict(ctx.env) if ctx is not None else None)
            self.tmux.set_remain_on_exit(new_pane)
        except Exception as exc:    # tmux or the directory may be gone
            self._refused(w, f"could not open a window: {exc}")
            return None, ""
        key = new_pane if ":" in new_pane else f"{self.tmux.label}:{new_pane}"
        return key, f"a new window ({new_pane})"

    def _same_pane(self, w: Watched, argv: tuple[str, ...],
                   pinned: str | None) -> tuple[str | None, str]:
        state = w.state
        w.state = dataclasses.replace(state, incident=None, task=None, session_id=pinned,
                                      generation=state.generation + 1)
        result = self.relauncher.relaunch(w, Relaunch(argv, w.state.generation, False, pinned))
        if result.outcome is not Outcome.STARTED:
            w.state = state
            self._refused(w, result.detail or result.outcome.value)
            return None, ""
        return w.key, f"the same pane ({w.pane_id})"

    def _refused(self, w: Watched, why: str) -> None:
        log.warning("%s: cannot rerun: %s", w.key, why)
        self.ledger.append(Decision(Badge.SKIPPED, self.clock.wall(), w.state.terminal,
                                    w.state.agent, w.state.task or "", w.state.project,
                                    "rerun (you asked)", f"did not rerun: {why}", 0, {}))
