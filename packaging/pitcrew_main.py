"""The bundle's entry point: the same `pitcrew` command the wheel installs."""

from __future__ import annotations

import os
import sys

if sys.platform == "darwin" and getattr(sys, "frozen", False):
    # An .app started from Finder or at login gets launchd's bare PATH: add Homebrew's
    # prefixes so tmux (and the agent CLIs) are found.
    extra = ["/opt/homebrew/bin", "/usr/local/bin"]
    path = os.environ.get("PATH", "/usr/bin:/bin:/usr/sbin:/sbin").split(os.pathsep)
    os.environ["PATH"] = os.pathsep.join([*[p for p in extra if p not in path], *path])

from pitcrew.supervisor.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
