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
has written its session, so the row waits for it (at most WRITE_WITHIN, kept in state.json).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from pitcrew.supervisor.adapters.processes import resume_argv
from pitcrew.supervisor.core.records import Badge, Decision, Relaunch
from pitcrew.supervisor.core.seats import AgentChoice
from pitcrew.supervisor.service.ports import Clock, LedgerPort, Persist, TmuxPort
from pitcrew.supervisor.service.relaunching import Outcome, Relauncher
from pitcrew.supervisor.service.seats import launch_command
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")
WRITE_WITHIN = 120.0     # seconds: the Rerun row waits this long at most for the new session

Queue = Callable[[str, str], object]          # (terminal key, prompt) → queued delivery
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
                 saved: object = None) -> None:
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

    def to_json(self) -> dict[str, Any]:
        return dict(self.pending)

    def rerun(self, w: Watched) -> str | None:
        """Start `w`'s provider afresh and send the prompt again; the key of the terminal it
        runs in, or None when it could not start (said in the log and a ledger row)."""
        inc = w.state.incident
        prompt = (inc.prompt if inc else w.state.task) or ""
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
        if prompt and prompt != "(a prompt)":
            self.queue(key, prompt)
        row = {"badge": Badge.RERUN.value, "terminal": w.state.terminal, "agent": w.state.agent,
               "prompt": prompt, "project": w.state.project,
               "reason": f"a fresh session in {where}"
                         + ("; the prompt is sent again" if prompt else "; no prompt to send"),
               "readings": {"old_session": old, "new_session": pinned, "where": where,
                            "pane": key.rsplit(":", 1)[-1]}}
        log.info("%s: rerun in %s (was session %s)", w.key, where, old or "unknown")
        if pinned is not None:
            self._write(row, pinned)
        else:
            self.pending[key] = {"at": self.clock.wall(), "old": old, "row": row}
        self.persist()
        self.look_again(key.rsplit(":", 1)[-1])
        return key

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
