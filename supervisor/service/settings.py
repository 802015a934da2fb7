"""The live settings: config.toml as last read, re-read when it changes, and the few values a
UI may change (validated like the file's own loader, written with comments kept).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pitcrew.supervisor.store import config_edit
from pitcrew.supervisor.store.config import Config, check_setting, load_config

log = logging.getLogger("pitcrew")

# What the UI may change in config.toml (the rest is for the user's editor).
SETTABLE = frozenset({("autopilot", "enabled"), ("autopilot", "ask_to_continue"),
                      ("diagnosis", "enabled"), ("diagnosis", "mode"),
                      ("diagnosis", "checkers")})


class Settings:
    def __init__(self, path: Path, config: Config, other_problems: tuple[str, ...] = (),
                 config_problems: tuple[str, ...] = ()) -> None:
        self.path = path
        self.config = config
        self.other_problems = other_problems      # provider files: fixed until a restart
        self.config_problems = config_problems
        self._mtime = _mtime(path)

    @property
    def problems(self) -> tuple[str, ...]:
        return (*self.config_problems, *self.other_problems)

    def current(self) -> Config:
        return self.config

    def reload(self, force: bool = False) -> bool:
        """Re-read config.toml if it changed; True when it was re-read."""
        mtime = _mtime(self.path)
        if mtime == self._mtime and not force:
            return False
        self._mtime = mtime
        loaded = load_config(self.path)
        for problem in loaded.errors:
            log.warning("%s", problem)
        self.config = loaded.config
        self.config_problems = tuple(loaded.errors)
        return True

    def set(self, section: str, key: str, value: Any) -> bool:
        if (section, key) not in SETTABLE:
            log.warning("ignoring a change to %s.%s: not a UI setting", section, key)
            return False
        try:
            check_setting(section, key, value)
            config_edit.set_value(self.path, section, key, value)
        except (ValueError, OSError) as exc:
            log.warning("cannot set %s.%s: %s", section, key, exc)
            return False
        self.reload(force=True)
        return True


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
