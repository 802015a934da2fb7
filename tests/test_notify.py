"""The notification gate, and real notifications through a real daemon (dunst on a private
session bus): what the daemon received is what the user would see."""

from __future__ import annotations

import json
import os
import queue
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pitcrew.supervisor.adapters.notifier import (
    DesktopBackend,
    Gate,
    Level,
    Message,
    default_gate,
    desktop_backend,
    log_backend,
)
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


def test_without_a_session_bus_the_default_gate_only_logs(monkeypatch, caplog) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    gate = default_gate(on_action=lambda *_: None)
    assert gate.backends == [log_backend]
    caplog.set_level("WARNING")
    assert gate.offer(Message('"Codex" is waiting on you', "log in", "k", terminal="s:%1"))
    assert 'needs you: "Codex" is waiting on you — log in' in caplog.text


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


def test_a_secret_in_a_notification_is_redacted_on_screen_and_in_the_log(
        notifications: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    backend = desktop_backend()
    assert backend is not None
    secret = "sk-ant-api03-" + "A1b2C3d4" * 6
    caplog.set_level("WARNING")
    # a title of its own: the daemon's history holds the other tests' notifications too
    Gate([backend, log_backend]).offer(Message(
        '"Codex" stopped retrying', f'Stopped retrying "export KEY={secret} && deploy"',
        "k"))
    shown = wait_until(lambda: [h for h in dunst_history(notifications)
                                if h["summary"] == '"Codex" stopped retrying'], timeout=10)
    assert secret not in shown[0]["body"] and "[redacted]" in shown[0]["body"]
    assert "deploy" in shown[0]["body"]
    assert secret not in caplog.text and "[redacted]" in caplog.text


def dunstctl(env: dict[str, str], *args: str) -> str:
    return subprocess.run(["dunstctl", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True).stdout


@pytest.fixture
def actions(notifications: dict[str, str]) -> Iterator[tuple[DesktopBackend, queue.Queue]]:
    """A desktop backend whose `on_action` calls land in a queue."""
    got: queue.Queue[tuple[str, Message]] = queue.Queue()
    backend = desktop_backend(lambda action, msg: got.put((action, msg)))
    assert isinstance(backend, DesktopBackend)
    yield backend, got
    backend.close()


def show(backend: DesktopBackend, env: dict[str, str], msg: Message) -> None:
    backend(msg)
    assert backend.flush(10)
    wait_until(lambda: dunstctl(env, "count", "displayed").strip() == "1", timeout=10)


def press(env: dict[str, str], label: str, title: str) -> list[str]:
    """Choose `label` in dunst's context menu, as a person would; returns the menu shown."""
    pick = Path(env["DUNST_PICK_FILE"])
    menu = Path(f"{pick}.menu")
    menu.unlink(missing_ok=True)
    pick.write_text(f"#{label} ({title})")
    dunstctl(env, "context")      # returns at once; dunst runs its dmenu in the background
    return wait_until(lambda: menu.is_file() and menu.read_text().endswith("\n")
                      and menu.read_text().splitlines(), timeout=10)


def labels(menu: list[str]) -> list[str]:
    """dunst lists each action as "#<label> (<summary>) [<id>,<action key>]"."""
    return sorted(line.split(" (")[0].removeprefix("#") for line in menu)


@pytest.mark.parametrize(("label", "action"), [
    ("Open terminal", "open"), ("Resume now", "resume"), ("Snooze", "snooze"),
])
def test_each_button_of_a_terminal_notification_reaches_on_action(
        notifications: dict[str, str], actions, label: str, action: str) -> None:
    backend, got = actions
    msg = Message('"Claude Code" stopped', "usage limit", f"k-{action}", terminal="work:%3")
    show(backend, notifications, msg)
    menu = press(notifications, label, msg.title)
    assert labels(menu) == ["", "Open terminal", "Resume now", "Snooze"]  # "": body click
    assert sorted(line.rsplit(",", 1)[1] for line in menu) == [
        "default]", "open]", "resume]", "snooze]"]
    assert got.get(timeout=10) == (action, msg)
    assert got.empty()


def test_clicking_the_body_of_a_notification_reaches_on_action(
        notifications: dict[str, str], actions) -> None:
    backend, got = actions
    msg = Message('"Codex" is waiting on you', "approve a command", "k", terminal="work:%4",
                  level=Level.CRITICAL)
    show(backend, notifications, msg)
    dunstctl(notifications, "action", "0")        # a left click on the notification
    assert got.get(timeout=10) == ("clicked", msg)


def test_a_message_without_a_terminal_has_no_buttons(
        notifications: dict[str, str], actions) -> None:
    backend, got = actions
    msg = Message("Seat api switched", "to codex", "k")
    show(backend, notifications, msg)
    assert labels(press(notifications, "Snooze", msg.title)) == [""]  # only the body click
    dunstctl(notifications, "action", "0")        # clicking it tells nobody
    dunstctl(notifications, "close-all")
    # Signals arrive in order: if the click had reached on_action, it would come first.
    marker = Message("marker", "b", "k2", terminal="s:%1")
    show(backend, notifications, marker)
    dunstctl(notifications, "action", "0")
    assert got.get(timeout=10) == ("clicked", marker)


def test_snooze_button_snoozes_the_default_gate_then_tells_the_caller(
        notifications: dict[str, str]) -> None:
    got: queue.Queue[tuple[str, Message]] = queue.Queue()
    gate = default_gate(lambda action, msg: got.put((action, msg)))
    backend = gate.backends[-1]
    assert isinstance(backend, DesktopBackend)
    try:
        msg = Message('"Gemini" stopped', "rate limited", "k", terminal="work:%5")
        assert gate.offer(msg)
        assert backend.flush(10)
        wait_until(lambda: dunstctl(notifications, "count", "displayed").strip() == "1", 10)
        press(notifications, "Snooze", msg.title)
        assert got.get(timeout=10) == ("snooze", msg)
        assert not gate.offer(Message("other", "x", "other-key"))
    finally:
        backend.close()


def test_a_failing_on_action_is_logged_not_raised(
        notifications: dict[str, str], caplog) -> None:
    calls: queue.Queue[str] = queue.Queue()

    def broken(action: str, _msg: Message) -> None:
        calls.put(action)
        raise RuntimeError("handler broke")

    backend = DesktopBackend(broken)
    try:
        show(backend, notifications, Message("t1", "b", "k1", terminal="s:%1"))
        press(notifications, "Resume now", "t1")
        assert calls.get(timeout=10) == "resume"
        wait_until(lambda: "notification action resume failed" in caplog.text, timeout=10)
        dunstctl(notifications, "close-all")
        show(backend, notifications, Message("t2", "b", "k2", terminal="s:%1"))  # still alive
        dunstctl(notifications, "action", "0")
        assert calls.get(timeout=10) == "clicked"
    finally:
        backend.close()
