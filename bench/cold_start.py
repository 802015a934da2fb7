"""How long `pitcrew` takes to start: `--version` and `status`, each against `python -c pass`.

Each run of a command is paired with a run of the bare interpreter, in turn (A B A B …), and
the ratio is taken pair by pair, so a machine whose speed drifts (a shared one) still gives a
fair comparison. Bytecode is cached (in a temporary folder) as an installed package's would
be, and each command runs once untimed first (which also fills Pitcrew's cache folder, as any
earlier run would: the provider patterns known to compile). `status` asks a tmux server that
is not running (private socket name): what a user sees first on a fresh machine, and the time
spent before any agent is found. `--server` starts a private tmux server with one shell
first, so `status` scans it too.

    .venv/bin/python bench/cold_start.py [--runs 10] [--server]

Targets (issue 24): --version ≤ 150 ms and ≤ 10× the interpreter; status ≤ 300 ms and
≤ 20×.
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


def pitcrew_argv() -> list[str]:
    script = Path(sys.executable).parent / "pitcrew"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pitcrew.supervisor"]


def wall(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return time.perf_counter() - t0


def pair(name: str, argv: list[str], runs: int, env: dict[str, str]) -> dict[str, float]:
    bare = [sys.executable, "-c", "pass"]
    wall(argv, env)
    wall(bare, env)
    ours, base, ratios = [], [], []
    for _ in range(runs):
        a = wall(argv, env)
        b = wall(bare, env)
        ours.append(a)
        base.append(b)
        ratios.append(a / b)
    row = {"median_ms": 1000 * statistics.median(ours),
           "python_ms": 1000 * statistics.median(base),
           "ratio": statistics.median(ratios)}
    print(f"{name:<18} {row['median_ms']:7.0f} ms   python -c pass {row['python_ms']:5.0f} ms"
          f"   ratio {row['ratio']:5.1f}×   (median of {runs} pairs)")
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--server", action="store_true", help="scan a running tmux server")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pitcrew-cold-") as tmp:
        socket = f"pitcrew-cold-{os.getpid()}"
        env = {**os.environ, "PITCREW_HOME": str(Path(tmp) / "home"),
               "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pyc")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for key in ("DISPLAY", "WAYLAND_DISPLAY", "PITCREW_TMUX_SOCKET"):
            env.pop(key, None)
        if args.server:
            subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d"],
                           check=True)
        try:
            pair("pitcrew --version", [*pitcrew_argv(), "--version"], args.runs, env)
            pair("pitcrew status", [*pitcrew_argv(), "--tmux-socket", socket, "status"],
                 args.runs, env)
        finally:
            if args.server:
                subprocess.run(["tmux", "-L", socket, "kill-server"], check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
