"""The tray app's startup time and how responsive its UI stays while it watches 50 agents.

Runs under a private Xvfb with a real tray host (trayer), like the tests.

* Startup: `pitcrew tray` from process start until its icon is embedded in the tray (seen
  with xdotool), median of several runs; the baseline, measured in the same run, is a bare
  PySide6 script that shows one QSystemTrayIcon (what any Qt tray app pays).
* Responsiveness: the app's shell runs in this process with N fake agents in a private
  tmux server (half of them streaming output); a 10 ms QTimer on the UI thread records the
  longest gap between its ticks (an event-loop stall) over the window, with the dashboard
  open on the agents page; the baseline is the same timer with no supervisor.

    .venv/bin/python bench/ui_startup.py [--runs 5] [--panes 50] [--window 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ["PATH"] = f"{REPO / 'tests' / 'fake_agent'}{os.pathsep}{os.environ['PATH']}"

from bench.watch_cost import Fleet  # noqa: E402
from tests.support.desktop import Desktop  # noqa: E402

BARE_TRAY = """
import sys
from PySide6.QtGui import QIcon, QPixmap, QColor
from PySide6.QtWidgets import QApplication, QSystemTrayIcon
app = QApplication(["pitcrew"]); app.setApplicationName("Pitcrew")
pix = QPixmap(22, 22); pix.fill(QColor("green"))
icon = QSystemTrayIcon(QIcon(pix)); icon.show()
app.exec()
"""


def embedded_icon(env: dict[str, str]) -> bool:
    out = subprocess.run(["xdotool", "search", "--class", "pitcrew"], env=env,
                         capture_output=True, text=True).stdout.split()
    for wid in out:
        geo = subprocess.run(["xdotool", "getwindowgeometry", "--shell", wid], env=env,
                             capture_output=True, text=True).stdout
        fields = dict(line.split("=", 1) for line in geo.split() if "=" in line)
        if fields and int(fields["WIDTH"]) <= 64 and int(fields["X"]) > 0:
            return True
    return False


def time_to_icon(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        while not embedded_icon(env):
            if time.monotonic() - t0 > 60 or proc.poll() is not None:
                raise RuntimeError(f"no tray icon from {argv}")
            time.sleep(0.02)
        return time.monotonic() - t0
    finally:
        proc.terminate()
        proc.wait(10)


def startup(runs: int, env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as home:
        app_env = {**env, "PITCREW_HOME": home, "PITCREW_TMUX_SOCKET": "pitcrew-bench-none"}
        pitcrew = [time_to_icon([sys.executable, "-m", "pitcrew.supervisor", "tray"], app_env)
                   for _ in range(runs)]
    bare = [time_to_icon([sys.executable, "-c", BARE_TRAY], env) for _ in range(runs)]
    p, b = statistics.median(pitcrew), statistics.median(bare)
    print(f"startup to tray icon (median of {runs}): Pitcrew {p:.2f} s, bare PySide6 tray "
          f"{b:.2f} s, ratio {p / b:.2f}x  (all: {', '.join(f'{x:.2f}' for x in pitcrew)})")


def stalls(panes: int, window: float, env: dict[str, str]) -> None:
    os.environ.update(env)
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])

    def longest_gap(seconds: float) -> tuple[float, float]:
        gaps: list[float] = []
        last = [time.monotonic()]

        def tick() -> None:
            now = time.monotonic()
            gaps.append(now - last[0])
            last[0] = now

        timer = QTimer()
        timer.timeout.connect(tick)
        timer.start(10)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.001)
        timer.stop()
        gaps.sort()
        return gaps[-1] * 1000, gaps[int(len(gaps) * 0.99)] * 1000

    base_max, base_p99 = longest_gap(min(window, 10))
    with tempfile.TemporaryDirectory() as root:
        fleet = Fleet(panes, Path(root))
        home = Path(root) / "home"
        (home / "providers").mkdir(parents=True)
        (home / "providers" / "fakeagent.toml").write_text(
            (REPO / "tests" / "fake_agent" / "fakeagent.toml").read_text())
        (home / "state.json").write_text('{"version": 1, "consent": true, "paused": false, '
                                         '"terminals": {}, "extra": {"consent_asked": true}}')
        os.environ.update({"PITCREW_HOME": str(home), "PITCREW_TMUX_SOCKET": fleet.name})
        from pitcrew.desktop.shell import Shell
        from pitcrew.supervisor.service.app_context import load_context

        shell = Shell(app, load_context(fleet.name))
        try:
            shell.start()
            deadline = time.monotonic() + 120
            while len(shell.host.latest.terminals) < panes and time.monotonic() < deadline:
                app.processEvents()
                time.sleep(0.01)
            shell.open_dashboard("agents", "")
            for pane in fleet.panes()[: panes // 2]:
                fleet.tmux.run("send-keys", "-t", pane, "-l", "work 60")
                fleet.tmux.run("send-keys", "-t", pane, "Enter")
            worst, p99 = longest_gap(window)
        finally:
            shell.host.stop()
            fleet.stop()
    print(f"UI event loop with {panes} agents ({panes // 2} streaming), dashboard open, "
          f"{window:.0f} s: longest stall {worst:.0f} ms, p99 gap {p99:.0f} ms; "
          f"baseline (no supervisor): longest {base_max:.0f} ms, p99 {base_p99:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--panes", type=int, default=50)
    parser.add_argument("--window", type=float, default=20.0)
    args = parser.parse_args()
    desktop = Desktop()
    try:
        desktop.start_tray_host()
        env = {**os.environ, "DISPLAY": desktop.display or ""}
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        startup(args.runs, env)
        stalls(args.panes, args.window, env)
    finally:
        desktop.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
