"""The shell's own report of how its foreground program died (an agent started from a shell
has no exit status Pitcrew can read)."""

from __future__ import annotations

import signal

import pytest

from pitcrew.supervisor.core.shell_report import is_report, shell_signal


@pytest.mark.parametrize(("tail", "expected"), [
    (("⠋ working 30s · esc to interruptKilled", "bash-5.2$ "), signal.SIGKILL),   # bash, \r
    (("» refactor", "Killed", "$ "), signal.SIGKILL),                              # dash
    (("Segmentation fault (core dumped)", "me@box:~/api$ "), signal.SIGSEGV),
    (("Terminated", "$ "), signal.SIGTERM),
    (("zsh: killed     claude", "% "), signal.SIGKILL),
    (("⠹ working 29s · esc to interruptzsh: killed     toyagent", "% "), signal.SIGKILL),
    # the prompt above a dead TUI's leftovers (a full-screen program killed mid-draw)
    (("  ┃  Killed", "me@box:~/api$ ", "  ┃  Build · Model", "  ╹▀▀▀▀▀▀▀▀",
      "   ⬝⬝⬝⬝  esc interrupt"), signal.SIGKILL),
    (("zsh: segmentation fault (core dumped)  codex", "% "), signal.SIGSEGV),
    (("zsh: terminated  claude --resume 1234", "% "), signal.SIGTERM),
    (("fish: Job 1, 'claude' terminated by signal SIGKILL (Forced quit)", "> "),
     signal.SIGKILL),
])
def test_each_shells_report_names_the_signal(tail: tuple[str, ...], expected: int) -> None:
    assert shell_signal(tail) == expected


@pytest.mark.parametrize("tail", [
    ("◇ done: fix the tests", "bye", "$ "),            # a normal exit
    ("The job was Killed by the scheduler last night and restarted", "x", "y", "z", "$ "),
    ("Killed", "one", "two", "three", "$ "),           # too far above the prompt
    ("I skilled up the parser", "$ "),
    ("^C", "$ "),
])
def test_no_report_is_no_signal(tail: tuple[str, ...]) -> None:
    assert shell_signal(tail) is None


@pytest.mark.parametrize(("row", "report"), [
    ("Killed", True), (" Killed ", True), ("Segmentation fault (core dumped)", True),
    ("zsh: killed     claude", True), ("Terminated", True),
    ("fish: Job 1, 'claude' terminated by signal SIGKILL (Forced quit)", True),
    ("Killed the flaky test", False), ("why was it Killed", False), ("kill it", False),
    ("", False),
])
def test_a_row_that_is_only_the_shells_report(row: str, report: bool) -> None:
    assert is_report(row) is report
