"""Everything a command needs, loaded once: paths, config, providers, the tmux server."""

from __future__ import annotations

import os
from dataclasses import dataclass

from pitcrew import resources
from pitcrew.supervisor.adapters.tmux import Tmux
from pitcrew.supervisor.providers.loader import Registry, load_registry
from pitcrew.supervisor.providers.model import Provider
from pitcrew.supervisor.store.config import Config, load_config
from pitcrew.supervisor.store.paths import Paths, resolve


@dataclass(frozen=True, slots=True)
class AppContext:
    paths: Paths
    config: Config
    registry: Registry
    tmux: Tmux
    problems: tuple[str, ...]   # one line per bad config field or provider file

    @property
    def active_providers(self) -> list[Provider]:
        disabled = set(self.config.disabled_providers)
        return [p for p in self.registry if p.name not in disabled]


def load_context(tmux_socket: str | None = None) -> AppContext:
    paths = resolve()
    loaded = load_config(paths.config_file)
    registry = load_registry(resources.providers_dir(), paths.user_providers_dir,
                             paths.known_patterns_file)
    socket = tmux_socket or os.environ.get("PITCREW_TMUX_SOCKET") or loaded.config.tmux_socket
    unknown = [
        f"{paths.config_file.name}: providers.disabled: no provider named {name!r}"
        for name in loaded.config.disabled_providers
        if registry.get(name) is None
    ]
    return AppContext(
        paths=paths,
        config=loaded.config,
        registry=registry,
        tmux=Tmux(socket),
        problems=(*loaded.errors, *unknown, *registry.errors),
    )
