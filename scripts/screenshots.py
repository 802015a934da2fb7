"""Take the README's screenshots under a private Xvfb with a real tray host.

Starts a private tmux server with a few fake agents in different states, seeds a ledger with
recent decisions, runs the tray app's shell in this process, and saves into docs/:
tray-menu.png (the whole screen with the tray menu open), dashboard-agents.png,
dashboard-diagnosis.png and dashboard-autopilot.png (the dashboard window).

    .venv/bin/python scripts/screenshots.py [--out docs]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
FAKE = REPO / "tests" / "fake_agent"
os.environ["PATH"] = os.pathsep.join([str(FAKE), str(REPO / "tests" / "fake_checkers"),
                                     os.environ["PATH"]])   # fake agent; checker CLIs

from pitcrew.supervisor.adapters.tmux import Tmux  # noqa: E402
from pitcrew.supervisor.core.records import Badge, Decision  # noqa: E402
from pitcrew.supervisor.store.ledger import Ledger  # noqa: E402
from tests.support.desktop import Desktop  # noqa: E402

AGENTS = [("api", "work 900"), ("web", "login"), ("docs", "question"), ("infra", None)]
DECISIONS = [
    (Badge.WAITING, "add rate limiting to /login", "web", "the agent needs you to log in"),
    (Badge.CONTINUED, "fix the flaky upload test", "api",
     "continued in place with the CLI's own message"),
    (Badge.RESUMED, "fix the flaky upload test", "api",
     "resumed the session (by session id) in the same pane; attempt 1"),
    (Badge.DIAGNOSED, "fix the flaky upload test", "api", "codex says connection_lost in 4.2s"),
    (Badge.SWITCHED, "write the migration guide", "docs",
     "usage limit, resets 15:00: Codex took the seat with a task brief"),
    (Badge.STOPPED, "bump the terraform providers", "infra",
     'Stopped retrying "bump the terraform providers" after 3 resumes; waiting on you.'),
    (Badge.COULDNT_RESUME, "profile the importer", "api", "no session to resume in this pane"),
]


def seed(home: Path, root: Path) -> None:
    (home / "providers").mkdir(parents=True)
    (home / "providers" / "fakeagent.toml").write_text((FAKE / "fakeagent.toml").read_text())
    (home / "config.toml").write_text(
        '[autopilot]\nenabled = true\n[diagnosis]\nmode = "ai"\n'
        'checkers = ["claude", "codex:gpt-5", "gemini"]\n')
    (home / "state.json").write_text('{"version": 1, "consent": true, "paused": false, '
                                     '"terminals": {}, "extra": {"consent_asked": true}}')
    ledger = Ledger(home / "autopilot-ledger.jsonl")
    now = time.time()
    for i, (badge, prompt, project, reason) in enumerate(reversed(DECISIONS)):
        ledger.append(Decision(badge, now - 3600 + i * 420, "work:%1", "Claude Code", prompt,
                               str(root / project), "process exited", reason, 1))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(REPO / "docs"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    desktop = Desktop()
    tmp = Path(tempfile.mkdtemp(prefix="pitcrew-shots-"))
    home, root = tmp / "home", tmp / "work"
    sock = f"pitcrew-shots-{os.getpid()}"
    tmux = Tmux(sock, config_file="/dev/null")
    try:
        desktop.start_tray_host()
        os.environ.update({"DISPLAY": desktop.display or "", "PITCREW_HOME": str(home),
                           "PITCREW_TMUX_SOCKET": sock, "HOME": str(tmp),
                           "FAKEAGENT_HOME": str(tmp / "fa")})
        os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
        os.environ.pop("QT_QPA_PLATFORM", None)
        seed(home, root)
        tmux.run("new-session", "-d", "-s", "keep", "-x", "120", "-y", "30", "sleep 86400")
        for name, _ in AGENTS:
            (root / name).mkdir(parents=True)
            tmux.run("new-window", "-d", "-t", "=keep:", "-c", str(root / name), "fakeagent")
        panes = [p.pane_id for p in tmux.list_panes()][1:]   # the first is the keeper
        time.sleep(1.5)
        for pane, (_, command) in zip(panes, AGENTS, strict=False):
            if command:
                tmux.run("send-keys", "-t", pane, "-l", command)
                tmux.run("send-keys", "-t", pane, "Enter")
        shoot(out, len(AGENTS))
    finally:
        with contextlib.suppress(Exception):
            tmux.run("kill-server")
        desktop.stop()
    for png in sorted(out.glob("*.png")):
        print(png)
    return 0


def shoot(out: Path, agents: int) -> None:
    from PySide6.QtWidgets import QApplication

    from pitcrew.desktop.shell import Shell
    from pitcrew.supervisor.service.app_context import load_context

    app = QApplication(sys.argv[:1])
    app.setApplicationName("Pitcrew")
    app.setDesktopFileName("pitcrew")

    def spin(seconds: float, until: object = None) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (callable(until) and until()):
            app.processEvents()
            time.sleep(0.01)

    shell = Shell(app, load_context(os.environ["PITCREW_TMUX_SOCKET"]))
    shell.start()
    spin(20, lambda: len(shell.host.latest.terminals) >= agents
         and len({t.state for t in shell.host.latest.terminals}) >= 3)
    spin(2)
    dash = shell.ensure_dashboard()
    dash.resize(1120, 760)
    for page, name in (("agents", "dashboard-agents"), ("diagnosis", "dashboard-diagnosis"),
                       ("autopilot", "dashboard-autopilot")):
        dash.open_page(page)
        spin(1.0)
        dash.grab().save(str(out / f"{name}.png"))
    dash.hide()
    spin(0.5)
    geo = shell.tray.icon.geometry()
    subprocess.run(["xdotool", "mousemove", str(geo.x() + 8), str(geo.y() + 8), "click", "3"],
                   check=False)
    spin(1.5)
    subprocess.run(["import", "-window", "root", "-crop", "760x520+520+0",
                    str(out / "tray-menu.png")], check=False)
    subprocess.run(["xdotool", "key", "Escape"], check=False)
    spin(0.3)
    shell.host.stop()


if __name__ == "__main__":
    raise SystemExit(main())
