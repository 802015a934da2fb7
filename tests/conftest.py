"""Shared fixtures. Every test gets its own PITCREW_HOME; tmux tests get their own server.

The whole run has a private HOME, XDG dirs, TMPDIR and tmux socket folder (one per xdist
worker), and fails if it leaves a process running or a file in the real HOME
(support/isolation.py).

Qt tests run on a real X server: when no DISPLAY is set, a private Xvfb is started for the
whole run (before any QApplication exists, so Qt picks the xcb platform); each xdist worker
has its own (a tray host and a notification daemon are one per display). Set
PITCREW_TEST_REQUIRE_DESKTOP=1 (as scripts/test.sh does) to make a missing desktop piece fail
the run instead of skipping the tests that need it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import isolation
from tests.support.desktop import Desktop, Missing
from tests.support.sshd import RemoteTmuxServer, Sshd, sshd_server
from tests.support.tmux_server import FAKE_AGENT_DIR, TmuxServer, tmux_server

REPO = Path(__file__).resolve().parent.parent
_desktop = Desktop()
_leaks: isolation.Leaks | None = None
_session: pytest.Session | None = None


def _require_desktop() -> bool:
    return os.environ.get("PITCREW_TEST_REQUIRE_DESKTOP") == "1"


def _xdist_controller(config: pytest.Config) -> bool:
    """This process hands tests to xdist workers and runs none itself."""
    return getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    global _leaks
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:       # the first process of the run (xdist's workers inherit its folder)
        _leaks = isolation.Leaks.start(isolation.run_root())
    isolation.enter(worker or "main")
    # tmux gives a new pane the PATH of the client that asked for it (ignoring `-e PATH`),
    # so the fake agent must be on the test process's own PATH — and Pitcrew, which respawns
    # agents, finds it there too, as it would find a real CLI on a user's PATH.
    os.environ["PATH"] = f"{FAKE_AGENT_DIR}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ.pop("PITCREW_TMUX_SOCKET", None)
    os.environ.pop("PITCREW_AUTOPILOT", None)
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or \
            _xdist_controller(config):
        return
    try:
        os.environ["DISPLAY"] = _desktop.start_display()
        os.environ.pop("QT_QPA_PLATFORM", None)
    except Missing:
        if _require_desktop():
            raise
        os.environ["QT_QPA_PLATFORM"] = "offscreen"


# The slowest first (by path, from `--durations` on this machine): xdist hands tests out one at
# a time (scripts/test.sh: --dist load --maxschedchunk 1), so a long test drawn last would be
# the run's tail, alone on one worker while the others are done.
SLOW_FIRST = ("tests/faults/test_volume.py", "tests/test_redact.py::test_pathological_input",
              "tests/test_redact.py::test_work_grows", "tests/e2e/test_autopilot_e2e.py",
              "tests/faults/test_kill9.py", "tests/core/test_autopilot_properties.py",
              "tests/e2e/test_remote_hosts_e2e.py", "tests/e2e/test_toy_autopilot_e2e.py",
              "tests/e2e/test_diagnosis_e2e.py", "tests/cli/test_team_cli.py", "tests/faults/",
              "tests/e2e/", "tests/cli/")


# Tests that measure CPU time, or load the machine for minutes, run alone on it: on xdist the
# other workers wait (support/isolation.py `machine`). First in SLOW_FIRST too.
ALONE = ("tests/faults/test_volume.py::",
         "tests/test_redact.py::test_pathological_input_takes_linear_time",
         "tests/test_redact.py::test_work_grows_linearly_with_the_text")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return

    def rank(item: pytest.Item) -> int:
        return next((i for i, prefix in enumerate(SLOW_FIRST)
                     if item.nodeid.startswith(prefix)), len(SLOW_FIRST))
    items.sort(key=rank)


def pytest_sessionstart(session: pytest.Session) -> None:
    global _session
    _session = session


def pytest_unconfigure(config: pytest.Config) -> None:
    _desktop.stop()
    if _leaks is None:
        return
    factory = getattr(config, "_tmp_path_factory", None)
    with contextlib.suppress(Exception):     # where tmp_path folders are (none made: no matter)
        _leaks.temp_roots = (factory.getbasetemp(),) if factory is not None else ()
    problems = _leaks.check()
    if not problems:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    write = reporter.write_line if reporter is not None else print
    write("the test run left things behind (it fails for that):", red=True, bold=True)
    for line in problems:
        write(f"  {line}", red=True)
    if _session is not None and _session.exitstatus == pytest.ExitCode.OK:
        _session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _machine(request: pytest.FixtureRequest) -> Iterator[None]:
    """On xdist, a test in ALONE has the machine to itself (before any other fixture starts)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    with isolation.machine(alone=request.node.nodeid.startswith(ALONE)):
        yield


@pytest.fixture(autouse=True)
def pitcrew_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "pitcrew-home"
    home.mkdir()
    monkeypatch.setenv("PITCREW_HOME", str(home))
    return home


@pytest.fixture
def desktop() -> Desktop:
    return _desktop


@pytest.fixture
def tray_host() -> None:
    """A running XEmbed tray (trayer) on the test display."""
    try:
        _desktop.start_tray_host()
    except Missing as exc:
        if _require_desktop():
            raise
        pytest.skip(str(exc))


@pytest.fixture
def notifications(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A real notification daemon (dunst) on a private session bus, emptied around the test."""
    try:
        env = _desktop.start_notifications()
    except Missing as exc:
        if _require_desktop():
            raise
        pytest.skip(str(exc))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    import subprocess

    subprocess.run(["dunstctl", "close-all"], env={**os.environ, **env}, check=False)
    yield env
    subprocess.run(["dunstctl", "close-all"], env={**os.environ, **env}, check=False)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[TmuxServer]:
    if shutil.which("tmux") is None:
        if _require_desktop():
            raise RuntimeError("tmux is not installed")
        pytest.skip("tmux is not installed")
    with tmux_server(tmp_path) as server:
        yield server


@pytest.fixture
def fake_provider_installed(pitcrew_home: Path) -> Path:
    """Drop the fake agent's provider file where a user would put their own."""
    target = pitcrew_home / "providers"
    target.mkdir(exist_ok=True)
    shutil.copy(FAKE_AGENT_DIR / "fakeagent.toml", target / "fakeagent.toml")
    return target / "fakeagent.toml"


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[Sshd]:
    """A private sshd on 127.0.0.1 (key auth for the current user)."""
    with sshd_server(tmp_path / "sshd") as daemon:
        yield daemon


@pytest.fixture
def remote(sshd: Sshd, tmp_path: Path) -> Iterator[RemoteTmuxServer]:
    """A tmux server reached only through `sshd`."""
    server = RemoteTmuxServer(sshd, tmp_path / "remote")
    try:
        yield server
    finally:
        server.stop()

