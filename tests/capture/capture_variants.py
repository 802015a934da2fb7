"""Capture the same scenes again with other CLI versions and pane sizes, for new screens.

Runs one of the capture_<cli>.py scripts unchanged, but:

* every pane is forced to ``--width`` x ``--height`` (80 and 200 columns show different
  wrapping, truncation and layouts);
* screens go to ``tests/fixtures/screens/incoming/<provider>/`` with ``_v<version>_w<width>``
  appended to the name, so ``tests/fixtures/screens/split.py --source incoming`` splits them
  (30 % held out) before anyone tunes on them;
* each fixture records where tmux's cursor was (``cursor_x``/``cursor_y``);
* nothing else under tests/fixtures is written (session samples, process trees, help texts).

Install the versions under one folder per set, named as the scripts expect::

    npm install --prefix /tmp/i12-cli/claude-2.1.120 @anthropic-ai/claude-code@2.1.120
    mkdir -p /tmp/i12-cli/set-old && ln -s ../claude-2.1.120 /tmp/i12-cli/set-old/claude

    .venv/bin/python tests/capture/capture_variants.py --cli claude --set /tmp/i12-cli/set-old \\
        --width 80 --height 30 -- --only main

Arguments after ``--`` go to the capture script. The labels the scripts give are only a first
guess: read every screen and fix its label by FORMAT.md before splitting.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# (text on screen, keys that dismiss it, the screen's state, fixture slug)
INTERSTITIALS = [
    ("Choose how you'd like Codex to proceed", ("Down", "Enter"), "picker",
     "new_model_announcement"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True,
                    choices=("claude", "codex", "gemini", "qwen", "opencode", "copilot"))
    ap.add_argument("--set", required=True, help="folder holding <cli> -> install prefix")
    ap.add_argument("--width", type=int, default=80)
    ap.add_argument("--height", type=int, default=30)
    ap.add_argument("--script", default="", help="run capture_<script>.py instead of "
                    "capture_<cli>.py (e.g. turns)")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    os.environ["PITCREW_REALCLI"] = args.set
    sys.path.insert(0, str(HERE))
    import capkit

    incoming = capkit.SCREENS / "incoming"
    width, height = args.width, args.height
    cursor: dict[str, str] = {}

    original_new_pane = capkit.Tmux.new_pane
    original_capture = capkit.Tmux.capture
    original_save = capkit.save_screen

    def new_pane(self: capkit.Tmux, command: str, cwd: str, env: Any = None,
                 name: str = "cap") -> str:
        self.width, self.height = width, height
        return original_new_pane(self, command, cwd, env, name)

    def capture(self: capkit.Tmux, pane: str, ansi: bool = False) -> str:
        text = original_capture(self, pane, ansi)
        if not ansi:
            where = self.run("display-message", "-p", "-t", pane,
                             "#{cursor_x} #{cursor_y}", check=False).split()
            if len(where) == 2:
                cursor["x"], cursor["y"] = where
        return text

    def save_screen(provider: str, name: str, text: str, **kw: Any) -> Path:
        version = VERSION.get("v", "")
        kw.pop("reported", None)
        extra: dict[str, Any] = {}
        if cursor:
            extra = {"cursor_x": int(cursor["x"]), "cursor_y": int(cursor["y"])}
        capkit.SCREENS = incoming
        try:
            return original_save(provider, f"{name}_v{version}_w{width}".replace(".", "_"), text,
                                 **kw, **extra)
        finally:
            capkit.SCREENS = incoming.parent

    VERSION: dict[str, str] = {}
    capkit.Tmux.new_pane = new_pane  # type: ignore[method-assign]
    capkit.Tmux.capture = capture  # type: ignore[method-assign]
    capkit.save_screen = save_screen  # type: ignore[assignment]
    capkit.save_processes = lambda *a, **k: Path("/dev/null")  # type: ignore[assignment]

    import capsession

    # Interstitials an older or newer version shows where the script expects something else:
    # save each once as a fixture, then dismiss it the way a user would.
    original_wait = capsession.Session.wait
    handled: set[str] = set()

    def wait(self: capsession.Session, pane: str, cond: Any, timeout: float = 30.0,
             quiet: bool = False) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen(pane)
            for needle, keys, state, slug in INTERSTITIALS:
                if needle in screen and needle not in handled:
                    handled.add(needle)
                    self.shot(pane, slug, state, f"interstitial '{needle}' before the scene")
                    self.keys(pane, *keys)
                    time.sleep(1.5)
            left = deadline - time.monotonic()
            try:
                return original_wait(self, pane, cond, min(max(left, 0.5), 3.0), quiet=False)
            except TimeoutError:
                if time.monotonic() >= deadline:
                    if quiet:
                        return self.screen(pane)
                    raise

    capsession.Session.wait = wait  # type: ignore[method-assign]
    capsession.copy_session_sample = lambda *a, **k: Path("/dev/null")  # type: ignore[assignment]
    capsession.save_process_tree = lambda *a, **k: None  # type: ignore[assignment]
    capsession.copy_help = lambda *a, **k: Path("/dev/null")  # type: ignore[assignment]

    import importlib

    module = importlib.import_module(f"capture_{args.script or args.cli}")
    for name in ("copy_session_sample", "save_process_tree", "copy_help", "write_help",
                 "copy_tree_sample"):
        if hasattr(module, name):
            setattr(module, name, lambda *a, **k: None)
    binary = Path(args.set) / args.cli / "node_modules" / ".bin" / args.cli
    import subprocess

    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                         env={**os.environ, "DISABLE_AUTOUPDATER": "1"}, timeout=60).stdout
    VERSION["v"] = next((w for w in out.replace("v", " ").split() if w[:1].isdigit()), "x")
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    sys.argv = [f"capture_{args.script or args.cli}.py", *rest]
    module.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
