"""The live settings: what a UI may change in config.toml, and re-reading the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pitcrew.supervisor.service.settings import Settings
from pitcrew.supervisor.store.config import load_config

CONFIG = """\
# my notes about Pitcrew
[autopilot]
enabled = false   # off while I try it
quiet_after = 240
"""


def settings_over(path: Path, text: str = CONFIG) -> Settings:
    path.write_text(text, encoding="utf-8")
    return Settings(path, load_config(path).config)


def test_a_ui_setting_is_written_keeping_comments_and_applied(tmp_path: Path) -> None:
    settings = settings_over(tmp_path / "config.toml")
    assert settings.current().autopilot is False
    assert settings.set("autopilot", "enabled", True)
    assert settings.current().autopilot is True
    text = (tmp_path / "config.toml").read_text(encoding="utf-8")
    assert "# my notes about Pitcrew" in text
    assert "enabled = true   # off while I try it" in text
    assert settings.current().quiet_after == 240           # the rest stays as it was


def test_a_setting_the_ui_may_not_change_is_refused(tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    settings = settings_over(tmp_path / "config.toml")
    assert not settings.set("autopilot", "quiet_after", 10)
    assert "not a UI setting" in caplog.text
    assert "quiet_after = 240" in (tmp_path / "config.toml").read_text(encoding="utf-8")


def test_an_invalid_value_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    settings = settings_over(tmp_path / "config.toml")
    before = (tmp_path / "config.toml").read_text(encoding="utf-8")
    assert not settings.set("diagnosis", "mode", "guess")
    assert (tmp_path / "config.toml").read_text(encoding="utf-8") == before
    assert settings.current().diagnosis_mode == "ai"


def test_reload_rereads_only_a_changed_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    settings = settings_over(path)
    assert not settings.reload()                           # unchanged: not read again
    path.write_text("[autopilot]\nenabled = true\n", encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert settings.reload()
    assert settings.current().autopilot is True


def test_a_broken_file_keeps_running_on_defaults_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    settings = Settings(path, load_config(path).config, other_problems=("providers/x.toml: bad",))
    path.write_text("[autopilot]\nenabled = maybe\n", encoding="utf-8")
    assert settings.reload(force=True)
    assert settings.current().autopilot is False
    assert settings.problems[0].startswith("config.toml:")
    assert settings.problems[-1] == "providers/x.toml: bad"  # provider files: until a restart


def test_a_missing_file_is_the_defaults_and_a_set_creates_it(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    settings = Settings(path, load_config(path).config)
    assert settings.set("autopilot", "ask_to_continue", False)
    assert settings.current().ask_to_continue is False
    assert path.exists()
