"""Everything a command needs, loaded once: paths, config, providers, the tmux server."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

import resources
from supervisor.adapters.tmux import Tmux
from supervisor.config import Config, load_config
from supervisor.paths import Paths, resolve
from supervisor.providers.loader import Registry, load_registry
from supervisor.providers.model import Provider


@dataclass(frozen=True, slots=True)
class Context:
    paths: Paths
    config: Config
    registry: Registry
    tmux: Tmux
    problems: tuple[str, ...]   # one line per bad config field or provider file

    @property
    def active_providers(self) -> list[Provider]:
        disabled = set(self.config.disabled_providers)
        return [p for p in self.registry if p.name not in disabled]


def load_context(tmux_socket: str | None = None) -> Context:
    paths = resolve()
    loaded = load_config(paths.config_file)
    registry = load_registry(resources.providers_dir(), paths.user_providers_dir)
    socket = tmux_socket or os.environ.get("PITCREW_TMUX_SOCKET") or loaded.config.tmux_socket
    unknown = [
        f"{paths.config_file.name}: providers.disabled: no provider named {name!r}"
        for name in loaded.config.disabled_providers
        if registry.get(name) is None
    ]
    return Context(
        paths=paths,
        config=loaded.config,
        registry=registry,
        tmux=Tmux(socket),
        problems=(*loaded.errors, *unknown, *registry.errors),
    )


def local_zone() -> dt.tzinfo:
    """The machine's IANA zone (DST-aware), falling back to the current fixed offset."""
    try:
        import tzlocal

        return tzlocal.get_localzone()
    except Exception:
        return dt.datetime.now().astimezone().tzinfo or dt.UTC


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
