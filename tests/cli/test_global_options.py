"""Global options (`--tmux-socket`, `-v`, `--version`) work before or after the subcommand."""

from __future__ import annotations

import argparse
import json

import pytest

from pitcrew.supervisor import __version__
from pitcrew.supervisor.cli.parser import build_parser
from tests.cli.test_cli import pitcrew
from tests.support.tmux_server import TmuxServer


def subcommands() -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_tmux_socket_after_the_subcommand_is_the_same_as_before(tmux: TmuxServer) -> None:
    tmux.start("exec sleep 300")
    before = pitcrew("--tmux-socket", tmux.name, "status", "--json")
    after = pitcrew("status", "--tmux-socket", tmux.name, "--json")
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout) == json.loads(before.stdout)
    assert json.loads(after.stdout)["server_running"] is True
    absent = pitcrew("status", "--json", "--tmux-socket", "pitcrew-test-absent")
    assert json.loads(absent.stdout)["server"] == "pitcrew-test-absent"


def test_verbose_and_version_after_the_subcommand() -> None:
    out = pitcrew("providers", "--version")
    assert (out.returncode, out.stdout.strip()) == (0, f"pitcrew {__version__}")
    out = pitcrew("status", "-v", "--tmux-socket", "pitcrew-test-absent")
    assert out.returncode == 0, out.stderr
    assert "No tmux server is running (pitcrew-test-absent)" in out.stdout


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_subcommand_takes_the_global_options(name: str) -> None:
    sub = subcommands()[name]
    options = {o: a.dest for a in sub._actions for o in a.option_strings}
    assert {"--version", "-v", "--verbose"} <= options.keys()
    # after `hosts`, --tmux-socket names the remote host's server (`hosts add … --tmux-socket`)
    assert options["--tmux-socket"] == ("host_socket" if name == "hosts" else "tmux_socket")


def test_a_global_option_given_before_is_kept_when_not_repeated() -> None:
    args = build_parser().parse_args(["--tmux-socket", "a", "-v", "status"])
    assert (args.tmux_socket, args.verbose) == ("a", True)
    args = build_parser().parse_args(["status"])
    assert (args.tmux_socket, args.verbose) == (None, False)
    args = build_parser().parse_args(["--tmux-socket", "a", "status", "--tmux-socket", "b"])
    assert args.tmux_socket == "b"


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_subcommand_names_a_handler_that_exists(name: str) -> None:
    """Handlers are named as strings (imported when their subcommand runs): a typo would
    only show when a user runs that subcommand."""
    from pitcrew.supervisor.cli.main import handler

    assert callable(handler(subcommands()[name].get_default("handler")))
