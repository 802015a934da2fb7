"""`pitcrew` starts quickly: a subcommand imports what it uses, and `--version` next to nothing.

Timing itself is bench/cold_start.py's job (a shared machine's clock judges badly); these
tests guard what makes it fast: the modules a command loads, read from the real command's
`python -X importtime`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tmux_server import TmuxServer

HEAVY = ("pitcrew.supervisor.service", "pitcrew.supervisor.api", "pitcrew.desktop",
         "PySide6", "apscheduler", "psutil")


def loaded(*args: str) -> tuple[set[str], str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "pitcrew.supervisor",
                          *args], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    modules = {line.rsplit("|", 1)[1].strip() for line in out.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    return modules, out.stdout


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m.startswith(names))


def test_version_loads_no_service_qt_scheduler_or_psutil() -> None:
    modules, stdout = loaded("--version")
    assert stdout.startswith("pitcrew ")
    assert "pitcrew.supervisor.cli.main" in modules      # the check sees our imports at all
    assert heavy(modules, HEAVY) == []
    assert "logging" not in modules and "importlib.metadata" in modules   # read when asked


@pytest.mark.parametrize("command", ["status", "ledger", "hosts"])
def test_help_pages_load_no_command(command: str) -> None:
    modules, stdout = loaded(command, "--help")
    assert "usage: pitcrew" in stdout
    assert heavy(modules, (*HEAVY, "pitcrew.supervisor.cli.commands")) == []


NOT_FOR_STATUS = ("pitcrew.supervisor.api", "pitcrew.desktop", "PySide6", "apscheduler",
                  "pitcrew.supervisor.adapters.ssh", "pitcrew.supervisor.service.loop", "sqlite3")
# what only an agent's pane needs: its session files and the classifier of its screen
PER_AGENT = ("pitcrew.supervisor.core.classifier", "pitcrew.supervisor.adapters.sessions")


def test_status_loads_no_report_ssh_qt_or_scheduler() -> None:
    """`status` with no remote hosts: the scan, not the supervisor's service layer; with no
    tmux server, not even psutil."""
    modules, stdout = loaded("--tmux-socket", "pitcrew-test-absent", "status")
    assert "No tmux server is running" in stdout
    assert "pitcrew.supervisor.providers.loader" in modules
    assert heavy(modules, (*NOT_FOR_STATUS, *PER_AGENT, "psutil")) == []


def test_status_over_panes_with_no_agent_loads_no_classifier(tmux: TmuxServer) -> None:
    tmux.start("exec sleep 600")
    modules, stdout = loaded("--tmux-socket", tmux.name, "status")
    assert "No agent terminals on tmux server" in stdout
    assert "psutil" in modules                          # each pane's processes were read
    assert heavy(modules, (*NOT_FOR_STATUS, *PER_AGENT)) == []


def test_an_internal_error_still_reaches_the_log_file(pitcrew_home: Path) -> None:
    """The log file is opened at the first record (a quiet command never opens it)."""
    code = ("import pitcrew.supervisor.cli.commands as c\n"
            "def boom(args): raise RuntimeError('kaput')\n"
            "c.status = boom\n"
            "from pitcrew.supervisor.cli.main import main\n"
            "raise SystemExit(main(['status']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 70
    assert out.stderr.startswith("pitcrew: internal error: kaput (details in the log: ")
    log_file = Path(out.stderr.split("details in the log: ")[1].rstrip(")\n"))
    text = log_file.read_text()
    assert "internal error in status" in text and "RuntimeError: kaput" in text
    log_file.unlink()
    quiet = subprocess.run([sys.executable, "-m", "pitcrew.supervisor", "ledger"],
                           capture_output=True, text=True, timeout=60)
    assert quiet.returncode == 0 and not log_file.exists()
