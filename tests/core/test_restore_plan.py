"""The fleet record's merge rule and the restore planner; no I/O, no sleeps."""

from __future__ import annotations

import dataclasses

import pytest

from pitcrew.supervisor.core.fleet import (
    AgentPlace,
    Launched,
    PanePlace,
    WindowPlace,
    agent_count,
    from_before,
    merge,
)
from pitcrew.supervisor.core.restore_plan import CliCommands, plan
from pitcrew.supervisor.core.rules import Command

OLD, NEW = "100@1700000000", "200@1700009999"
FAKE = CliCommands(Command(("fakeagent", "{model_args}")),
                   Command(("fakeagent", "--resume", "{session_id}")), r"[0-9a-f-]{36}",
                   "Fake Agent")
NO_RESUME = dataclasses.replace(FAKE, resume_by_id=None)
SID = "0f3c2a1e-1111-4222-8333-944445555666"
SHELL = Launched("shell", ("/opt/bin/fakeagent",), "/w/api", {"MARK": "only-in-zsh"}, "zsh")
PANE = Launched("pane", ("/usr/bin/python3", "/opt/bin/fakeagent"), "/w/web", {"K": "v"})


def window(session: str = "work", index: int = 1, agents: tuple[AgentPlace, ...] = (),
           panes: int = 1, server: str = OLD, name: str = "api") -> WindowPlace:
    return WindowPlace(session, index, name, "b25d,120x40,0,0,1",
                       tuple(PanePlace(i, f"/w/p{i}") for i in range(panes)), agents, server)


def agent(pane: int = 0, launch: Launched = SHELL, sid: str | None = SID,
          task: str | None = None, provider: str = "fakeagent") -> AgentPlace:
    return AgentPlace(pane, provider, launch, sid, task, "Fake Agent")


# -- merge ------------------------------------------------------------------------------

def test_with_no_server_the_record_stays_as_it_is() -> None:
    rec = (window(agents=(agent(),)),)
    assert merge(rec, (), None, ()) == rec


def test_what_the_current_server_shows_replaces_what_was_recorded_from_it() -> None:
    rec = (window(agents=(agent(),), server=NEW), window(index=2, agents=(agent(),), server=NEW))
    seen = (window(agents=(agent(task="work 60"),), server=NEW),)
    assert merge(rec, seen, NEW, [("work", 1), ("work", 2)]) == seen   # window 2's agent ended


def test_windows_from_before_a_restart_are_kept_until_their_place_exists() -> None:
    old = window(agents=(agent(),))
    other = window("docs", 0, agents=(agent(),))
    assert merge((old, other), (), NEW, [("scratch", 0)]) == (other, old)
    assert merge((old, other), (), NEW, [("work", 1)]) == (other,)
    restored = dataclasses.replace(old, server=NEW)
    assert merge((old,), (restored,), NEW, [("work", 1)]) == (restored,)


def test_from_before_counts_only_other_servers_agents() -> None:
    rec = (window(agents=(agent(), agent(1))), window(index=2, agents=(agent(),), server=NEW))
    assert agent_count(from_before(rec, NEW)) == 2
    assert agent_count(from_before(rec, None)) == 3


# -- plan -------------------------------------------------------------------------------

def test_a_shell_launched_agent_gets_a_fresh_shell_with_its_env_and_the_resume_typed() -> None:
    win = window(agents=(agent(),))
    p = plan([win], [], [], {"fakeagent": FAKE})
    [step] = p.windows
    assert step.new_session and step.window is win
    [pane] = step.panes
    assert pane.argv == ("zsh",) and pane.env == {"MARK": "only-in-zsh"} and pane.cwd == "/w/api"
    assert pane.agent is not None
    assert pane.agent.typed and pane.agent.resumed and not pane.agent.cont
    assert pane.agent.argv == ("/opt/bin/fakeagent", "--resume", SID)
    assert pane.agent.target == "work:1.0"


def test_a_pane_command_agent_is_the_panes_command_with_its_env() -> None:
    p = plan([window(agents=(agent(launch=PANE, task="work 60"),))], ["work"], [],
             {"fakeagent": FAKE})
    [step] = p.windows
    assert not step.new_session
    [pane] = step.panes
    assert pane.argv == ("/usr/bin/python3", "/opt/bin/fakeagent", "--resume", SID)
    assert pane.env == {"K": "v"}
    assert pane.agent is not None and not pane.agent.typed and pane.agent.cont


@pytest.mark.parametrize(("cli", "sid", "why"), [
    (NO_RESUME, SID, "cannot resume a session by id"),
    (FAKE, None, "no session id was recorded"),
    (FAKE, "$(rm -rf ~)", "does not look like one of this CLI's"),
])
def test_an_agent_that_cannot_be_resumed_by_id_is_started_fresh_and_never_continued(
        cli: CliCommands, sid: str | None, why: str) -> None:
    p = plan([window(agents=(agent(sid=sid, task="work 60"),))], [], [], {"fakeagent": cli})
    [step] = p.agents
    assert not step.resumed and not step.cont and why in step.why_fresh
    assert step.argv == ("/opt/bin/fakeagent",)


def test_only_mid_task_agents_get_the_continue() -> None:
    win = window(agents=(agent(0, task="work 60"), agent(1)), panes=2)
    steps = plan([win], [], [], {"fakeagent": FAKE}).agents
    assert [(s.agent.pane, s.cont) for s in steps] == [(0, True), (1, False)]


def test_existing_windows_are_left_alone_so_a_second_restore_does_nothing() -> None:
    rec = [window(agents=(agent(task="work 60"),)), window("docs", 0, agents=(agent(),))]
    p = plan(rec, ["work", "docs"], [("work", 1), ("docs", 0)], {"fakeagent": FAKE})
    assert p.empty and not p.agents and len(p.left_alone) == 2


def test_a_missing_window_of_an_existing_session_is_a_new_window_in_it() -> None:
    rec = [window(index=1, agents=(agent(),)), window(index=2, agents=(agent(),), name="web")]
    p = plan(rec, ["work"], [("work", 1)], {"fakeagent": FAKE})
    assert [(s.window.index, s.new_session) for s in p.windows] == [(2, False)]


def test_only_one_window_of_a_new_session_creates_it() -> None:
    rec = [window(index=2, agents=(agent(),)), window(index=1, agents=(agent(),))]
    p = plan(rec, [], [], {"fakeagent": FAKE})
    assert [(s.window.index, s.new_session) for s in p.windows] == [(1, True), (2, False)]


def test_every_pane_comes_back_in_its_folder_and_plain_panes_get_a_shell() -> None:
    win = window(agents=(agent(1, launch=PANE),), panes=3)
    [step] = plan([win], [], [], {"fakeagent": FAKE}).windows
    assert [(p.index, p.argv == (), p.agent is not None) for p in step.panes] == [
        (0, True, False), (1, False, True), (2, True, False)]
    assert [p.cwd for p in step.panes] == ["/w/p0", "/w/web", "/w/p2"]


def test_named_sessions_only() -> None:
    rec = [window("work", agents=(agent(),)), window("docs", agents=(agent(),))]
    p = plan(rec, [], [], {"fakeagent": FAKE}, only=["docs"])
    assert [s.window.session for s in p.windows] == ["docs"]


def test_an_agent_of_a_cli_no_longer_known_is_not_started_and_says_why() -> None:
    p = plan([window(agents=(agent(provider="gone"),))], [], [], {"fakeagent": FAKE})
    assert not p.agents and len(p.windows) == 1 and p.windows[0].panes[0].argv == ()
    [(_, _, why)] = p.not_started
    assert "'gone'" in why
