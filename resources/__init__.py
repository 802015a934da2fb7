"""Pitcrew's data files: provider definitions, icons, the .desktop launcher."""

from __future__ import annotations

import sys
from pathlib import Path


def root() -> Path:
    """The resources folder, in a source tree, an installed wheel or a PyInstaller bundle."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle is not None:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parent


def providers_dir() -> Path:
    return root() / "providers"


def icons_dir() -> Path:
    return root() / "icons"
