"""Fixtures of the fault-injection suite."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path) -> Path:
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\nquiet_after = 300\n")
    return pitcrew_home
