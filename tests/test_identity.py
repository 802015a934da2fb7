"""Pitcrew installs one import package, `pitcrew`, and its core touches nothing outside."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from pitcrew import supervisor

REPO = Path(__file__).resolve().parent.parent


def test_supervisor_package_is_pitcrews() -> None:
    assert Path(supervisor.__file__).resolve().is_relative_to(REPO)


def test_nothing_but_pitcrew_is_installed_at_the_top_level(tmp_path: Path) -> None:
    """The wheel holds `pitcrew/…` and its metadata, nothing else at the top of site-packages
    (`supervisor` is also supervisord's import name; `desktop`/`resources` anyone's)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "-q", "-w", str(tmp_path), str(REPO)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("pitcrew-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        tops = {name.split("/")[0] for name in zf.namelist()}
        names = set(zf.namelist())
    assert {t for t in tops if not t.endswith(".dist-info")} == {"pitcrew"}
    assert "pitcrew/supervisor/core/classifier.py" in names
    assert "pitcrew/resources/providers/claude.toml" in names


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
