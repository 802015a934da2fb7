"""A manual rerun over fakes: a fresh session (no --resume), in the same pane when the agent
has exited and in a new window when it still runs, the prompt queued once, and a Rerun row
naming both sessions."""

from __future__ import annotations

import dataclasses

from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.core.records import Badge, Incident, Phase
from pitcrew.supervisor.service.reruns import WRITE_WITHIN, Reruns
from tests.service.fakes import AGENT_PID, Rig, make_pane

PROMPT = "fix the flaky test"


def rig_and_reruns(running: bool, saved: object = None) -> tuple[Rig, Reruns, list, list]:
    rig = Rig()
    queued: list[tuple[str, str]] = []
    relieved: list[tuple[str, str]] = []
    reruns = Reruns(rig.watched, rig.tmux, rig.clock, rig.ledger, rig.persist, rig.relauncher,
                    lambda key, text: queued.append((key, text)) or key, lambda w: running,
                    lambda w, why: relieved.append((w.key, why)), lambda pane: None, saved)
    return rig, reruns, queued, relieved


def with_incident(rig: Rig, session: str = "old-session"):
    w = rig.terminal()
    inc = Incident(3, PROMPT, rig.clock.wall(), "process exited", "crashed", attempts=2,
                   phase=Phase.WAITING, next_at=rig.clock.wall() + 20)
    w.state = dataclasses.replace(w.state, incident=inc, session_id=session)
    return w


def test_an_exited_agent_is_rerun_in_its_pane_without_its_old_session() -> None:
    rig, reruns, queued, relieved = rig_and_reruns(running=False)
    w = with_incident(rig)
    w.launch = LaunchContext(LaunchStyle.PANE, AGENT_PID, 1.0, AGENT_PID, ("fakeagent",),
                             ("/opt/bin/fakeagent",), "/work/api", {"PATH": "/opt/bin"})
    rig.tmux.panes["%1"] = make_pane("%1", dead=True, pid=4321)
    assert reruns.rerun(w) == w.key
    [(pane, argv, _)] = rig.tmux.respawned
    assert pane == "%1" and argv[0] == "/opt/bin/fakeagent"
    assert "--resume" not in argv and "old-session" not in argv
    assert "--session-id" in argv                    # fakeagent takes a fresh id at launch
    new_sid = argv[argv.index("--session-id") + 1]
    assert queued == [(w.key, PROMPT)] and relieved == []
    assert w.state.incident is None and w.state.session_id == new_sid   # a new incident next
    [row] = rig.ledger.rows
    assert row.badge is Badge.RERUN and row.prompt == PROMPT
    assert row.readings["old_session"] == "old-session"
    assert row.readings["new_session"] == new_sid


def test_a_running_agent_is_left_alone_and_the_rerun_opens_a_new_window() -> None:
    rig, reruns, queued, relieved = rig_and_reruns(running=True)
    w = with_incident(rig)
    key = reruns.rerun(w)
    [window] = rig.tmux.windows
    assert key == f"{rig.tmux.label}:{window['pane']}" and window["session"] == "work"
    assert "--resume" not in window["argv"]
    assert rig.tmux.respawned == [] and rig.procs.stopped == []    # never killed
    assert queued == [(key, PROMPT)]
    assert relieved and relieved[0][0] == w.key                     # its incident closes


def test_without_an_id_at_launch_the_row_waits_for_the_new_session() -> None:
    rig, reruns, queued, _ = rig_and_reruns(running=True)
    w = with_incident(rig)
    w.provider = dataclasses.replace(w.provider, launch=dataclasses.replace(
        w.provider.launch, session_id=()))
    key = reruns.rerun(w)
    assert queued == [(key, PROMPT)]
    assert rig.ledger.rows == [] and key in reruns.to_json()     # kept in state.json
    again = rig_and_reruns(running=True, saved=reruns.to_json())    # Pitcrew restarted
    rig2, reruns2 = again[0], again[1]
    new = rig2.terminal(key.rsplit(":", 1)[-1])
    reruns2.settle()
    assert rig2.ledger.rows == []
    new.state = dataclasses.replace(new.state, session_id="new-session")
    reruns2.settle()
    [row] = rig2.ledger.rows
    assert (row.readings["old_session"], row.readings["new_session"]) == ("old-session",
                                                                          "new-session")
    assert reruns2.to_json() == {}


def test_a_session_that_never_shows_still_gets_its_row() -> None:
    rig, reruns, _, _ = rig_and_reruns(running=True)
    w = with_incident(rig)
    w.provider = dataclasses.replace(w.provider, launch=dataclasses.replace(
        w.provider.launch, session_id=()))
    reruns.rerun(w)
    rig.clock.advance(WRITE_WITHIN + 1)
    reruns.settle()
    [row] = rig.ledger.rows
    assert row.readings["new_session"] is None


def test_a_busy_shell_is_never_typed_into_and_the_incident_stays() -> None:
    rig, reruns, queued, _ = rig_and_reruns(running=False)
    w = with_incident(rig)
    w.launch = LaunchContext(LaunchStyle.SHELL, AGENT_PID, 1.0, 777, ("fakeagent",),
                             ("/opt/bin/fakeagent",), "/work/api", {"PATH": "/opt/bin"},
                             shell_pid=777, shell_started=0.5, shell_name="bash")
    rig.procs.alive.add(777)
    rig.procs.busy_shells.add(777)
    assert reruns.rerun(w) is None
    assert rig.tmux.typed_into("%1") == [] and queued == []
    assert w.state.incident is not None and w.state.session_id == "old-session"
    [row] = rig.ledger.rows
    assert row.badge is Badge.SKIPPED and "did not rerun" in row.reason


def test_a_second_rerun_while_the_first_is_under_way_starts_nothing_and_says_so() -> None:
    rig, reruns, queued, _ = rig_and_reruns(running=True)
    reruns.prompt_pending = lambda key: (key, PROMPT) in queued   # its prompt not taken yet
    w = with_incident(rig)
    key = reruns.rerun(w)
    assert key is not None and reruns.rerun(w) is None
    rig.terminal(key.rsplit(":", 1)[-1])
    assert reruns.rerun(rig.watched[key]) is None        # nor of the terminal it started
    assert len(rig.tmux.windows) == 1 and queued == [(key, PROMPT)]
    skipped = [r for r in rig.ledger.rows if r.badge is Badge.SKIPPED]
    assert len(skipped) == 2 and "a rerun of this terminal is under way" in skipped[0].reason
    queued.clear()                                       # the new agent took the prompt
    rig.clock.advance(20)
    assert reruns.rerun(w) is not None and len(rig.tmux.windows) == 2


def test_a_rerun_after_the_task_finished_sends_the_last_task_and_with_none_says_so() -> None:
    rig, reruns, queued, _ = rig_and_reruns(running=True)
    w = rig.terminal()
    w.last_task = PROMPT                                 # the task finished: no incident, no task
    key = reruns.rerun(w)
    assert queued == [(key, PROMPT)]
    rig2, reruns2, queued2, _ = rig_and_reruns(running=True)
    w2 = rig2.terminal()
    w2.provider = dataclasses.replace(w2.provider, launch=dataclasses.replace(
        w2.provider.launch, session_id=()))              # no id at launch, and nothing to send:
    assert reruns2.rerun(w2) is not None and queued2 == []
    [row] = rig2.ledger.rows                             # … the row is written at once
    assert row.badge is Badge.RERUN and "no prompt sent" in row.reason
