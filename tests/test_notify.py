"""The notification gate, and real notifications through a real daemon (dunst on a private
session bus): what the daemon received is what the user would see."""

from __future__ import annotations

import json
import os
import subprocess

from supervisor.notify import Gate, Message, desktop_backend, log_backend
from tests.support.waiting import wait_until


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_gate_drops_repeats_and_holds_everything_while_snoozed() -> None:
    got: list[Message] = []
    clock = Clock()
    gate = Gate([got.append], dedupe_for=600, clock=clock)
    login = Message('"Claude Code" is waiting on you', "log in", "work:%3:login")
    assert gate.offer(login) and not gate.offer(login)
    clock.t = 601
    assert gate.offer(login)
    gate.snooze(3600)
    assert not gate.offer(Message("other", "x", "work:%4:unclear"))
    clock.t = 601 + 3601
    assert gate.offer(Message("other", "x", "work:%4:unclear"))
    assert [m.key for m in got] == ["work:%3:login", "work:%3:login", "work:%4:unclear"]


def test_a_failing_backend_never_breaks_the_gate() -> None:
    def broken(_: Message) -> None:
        raise OSError("no bus")

    got: list[Message] = []
    assert Gate([broken, got.append]).offer(Message("t", "b", "k"))
    assert len(got) == 1


def test_without_a_session_bus_notifications_are_log_lines(monkeypatch, caplog) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    assert desktop_backend() is None
    caplog.set_level("WARNING")
    log_backend(Message("Seat api switched", "to codex", "k"))
    assert "needs you: Seat api switched — to codex" in caplog.text


def dunst_history(env: dict[str, str]) -> list[dict[str, str]]:
    run = lambda *a: subprocess.run(["dunstctl", *a], capture_output=True, text=True,  # noqa: E731
                                    env={**os.environ, **env}, check=True).stdout
    run("close-all")
    data = json.loads(run("history"))["data"][0]
    return [{k: v["data"] for k, v in item.items()} for item in data]


def test_a_real_notification_reaches_the_daemon(notifications: dict[str, str]) -> None:
    backend = desktop_backend()
    assert backend is not None
    Gate([backend]).offer(Message('"Claude Code" is waiting on you',
                                  "the agent needs you to log in: Please run /login", "k"))
    shown = wait_until(lambda: [h for h in dunst_history(notifications)
                                if h["summary"] == '"Claude Code" is waiting on you'], timeout=10)
    assert shown[0]["appname"] == "Pitcrew"
    assert shown[0]["body"] == "the agent needs you to log in: Please run /login"
