"""Whether a graphical session is there for the tray app, asked before Qt is.

Why: without one, Qt does not fail politely. It aborts the process (exit 134) after
printing that `xcb-cursor0` is missing, which sends people to reinstall libraries when the
answer is "there is no display here; use `pitcrew watch`". Every way into the tray app
asks `missing_display()` first and stops with its one line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

# Qt platforms that draw nowhere or on their own device: they need no DISPLAY.
_SELF_CONTAINED = ("offscreen", "minimal", "vnc", "linuxfb", "eglfs", "vkkhrdisplay")


def has_display(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if sys.platform in ("darwin", "win32"):
        return True
    if env.get("QT_QPA_PLATFORM", "").split(":")[0] in _SELF_CONTAINED:
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def missing_display(environ: Mapping[str, str] | None = None) -> str | None:
    """None when the tray app can start here, else the one line that says why not."""
    if has_display(environ):
        return None
    return ("the tray app needs a display (DISPLAY and WAYLAND_DISPLAY are unset); "
            "run `pitcrew watch` to supervise without one")
