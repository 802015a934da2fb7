"""The markers every provider inherits (resources/providers/_common.toml), read on screens of
CLIs the classifier has no provider file for (issue #26)."""

from __future__ import annotations

import datetime as dt

from pitcrew.supervisor.core.classifier import classify
from pitcrew.supervisor.core.screen import ScreenState
from tests.support.screens import registry

UTC = dt.UTC
NOW = dt.datetime(2026, 11, 30, 14, 0, tzinfo=UTC)


def state(text: str) -> ScreenState:
    return classify(text, registry().generic_screen, NOW, UTC).state


def test_a_permission_request_naming_a_command_is_a_picker() -> None:
    screen = ("│ Shell Command\n│\n│ $ make test\n│\n│ Allow command?\n│\n"
              "│  ❯ Yes (y)\n│    No, and keep going (n)\n")
    assert state(screen) is ScreenState.PICKER


def test_a_question_the_agent_quotes_about_allowing_is_not_a_picker() -> None:
    screen = "● The docs ask: should we allow commands from CI to run here? I think so.\n> \n"
    assert state(screen) is not ScreenState.PICKER
