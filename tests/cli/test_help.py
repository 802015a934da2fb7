"""Every subcommand's `--help` says what it does and what each positional is."""

from __future__ import annotations

import argparse

import pytest

from tests.cli.test_cli import pitcrew
from tests.cli.test_global_options import subcommands


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_subcommand_has_a_description_and_explains_its_positionals(name: str) -> None:
    sub = subcommands()[name]
    assert sub.description and len(sub.description) > 20, name
    for action in sub._actions:
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
            assert action.help, f"{name} {action.dest}: no help"


def test_seat_help_explains_seat_and_terminal() -> None:
    out = pitcrew("seat", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "List seats, or bind a terminal to a seat." in text
    assert "SEAT with bind: the seat's name" in text
    assert "TERMINAL with bind: the agent terminal: pane id (%3)" in text
    hook = " ".join(pitcrew("hook", "--help").stdout.split())
    assert "EVENT the hook's event name" in hook
