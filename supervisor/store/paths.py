"""Where Pitcrew keeps its files.

`PITCREW_HOME` moves everything Pitcrew writes (config, state, ledger, logs, cache) into one
folder; tests rely on it. Without it, platformdirs' per-user directories are used. Three kinds
of files are kept apart: config (TOML the user edits), state (machine-written, replaced
atomically) and the ledger (append-only JSONL); the cache holds only what a run can rebuild.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP = "pitcrew"


@dataclass(frozen=True, slots=True)
class Paths:
    config_dir: Path
    data_dir: Path
    log_dir: Path
    runtime_dir: Path
    cache_dir: Path      # what can be thrown away: a run without it is only slower

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def user_providers_dir(self) -> Path:
        return self.config_dir / "providers"

    @property
    def state_file(self) -> Path:
        return self.data_dir / "state.json"

    @property
    def fleet_file(self) -> Path:
        return self.data_dir / "fleet.json"

    @property
    def ledger_file(self) -> Path:
        return self.data_dir / "autopilot-ledger.jsonl"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "pitcrew.log"

    @property
    def known_patterns_file(self) -> Path:
        """One per Python (`cpython-311`): the tray's bundled Python and the one running the
        command line may differ, and each keeps its own."""
        return self.cache_dir / f"known-patterns-{sys.implementation.cache_tag}.json"


def resolve(environ: os._Environ[str] | dict[str, str] | None = None) -> Paths:
    env = os.environ if environ is None else environ
    home = env.get("PITCREW_HOME")
    if home:
        root = Path(home).expanduser()
        return Paths(root, root, root / "logs", root / "run", root / "cache")
    return Paths(
        config_dir=Path(platformdirs.user_config_dir(APP)),
        data_dir=Path(platformdirs.user_data_dir(APP)),
        log_dir=Path(platformdirs.user_log_dir(APP)),
        runtime_dir=_runtime_dir(),
        cache_dir=Path(platformdirs.user_cache_dir(APP)),
    )


def _runtime_dir() -> Path:
    """platformdirs warns on stderr when XDG_RUNTIME_DIR is unset (ssh, containers, cron)
    and falls back to /tmp/runtime-<uid>; the fallback is fine, the warning is noise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir(APP))
