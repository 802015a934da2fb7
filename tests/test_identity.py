"""`supervisor` is also supervisord's import name: make sure the one imported is ours."""

from __future__ import annotations

from pathlib import Path

import supervisor

REPO = Path(__file__).resolve().parent.parent


def test_supervisor_package_is_pitcrews() -> None:
    assert Path(supervisor.__file__).resolve().is_relative_to(REPO)
    assert supervisor.PITCREW_MARK == "pitcrew"


def test_the_core_touches_nothing_outside() -> None:
    """supervisor/core decides; it never runs processes, reads clocks or imports Qt."""
    forbidden = ("import subprocess", "import os", "import time", "import psutil",
                 "PySide6", "import random", "open(")
    for path in (REPO / "supervisor" / "core").glob("*.py"):
        text = path.read_text()
        for word in forbidden:
            assert word not in text, f"{path.name} uses {word}"


def test_supervisor_never_imports_qt() -> None:
    for path in (REPO / "supervisor").rglob("*.py"):
        assert "PySide6" not in path.read_text(), path
