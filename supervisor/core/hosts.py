"""Hosts: the machines whose tmux Pitcrew watches (`[[hosts]]` in config.toml).

The local machine is the implicit host `local`; every other host is reached with `ssh`
(`ssh = "me@gpu1"`, or anything `ssh` accepts: a `~/.ssh/config` alias, `-J jump me@gpu1`),
optionally on a named tmux server (`tmux_socket`), and can be switched off (`enabled`).
A terminal on a remote host is keyed `<host>:<pane>` (`gpu1:%3`); a local one keeps its
`<tmux server>:<pane>` key, so nothing about local terminals changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

LOCAL = "local"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,31}$")
_KEYS = {"name", "ssh", "tmux_socket", "enabled"}


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    ssh: str                       # what follows `ssh` on a command line (split like a shell)
    tmux_socket: str | None = None
    enabled: bool = True


class HostState:
    """A host's connection as a user sees it."""

    UP = "up"
    DOWN = "down"
    CONNECTING = "connecting"
    DISABLED = "disabled"


def parse_host(item: Any) -> Host:
    """One `[[hosts]]` table → Host; ValueError with the field and what was wrong."""
    if not isinstance(item, dict):
        raise ValueError("expected a table")
    unknown = set(item) - _KEYS
    if unknown:
        raise ValueError(f"{sorted(unknown)[0]}: unknown key")
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name: expected a short name (a letter, then letters, digits, "
                         f"- _ .), got {name!r}")
    if name == LOCAL:
        raise ValueError(f'name: "{LOCAL}" is this machine (it needs no entry)')
    ssh = item.get("ssh")
    if not isinstance(ssh, str) or not ssh.strip():
        raise ValueError('ssh: expected what you would type after `ssh`, e.g. "me@gpu1"')
    if _destination(ssh.split()) is None:   # split like a shell by adapters/ssh.py
        raise ValueError(f"ssh: {ssh!r} names no host to connect to")
    socket = item.get("tmux_socket")
    if socket is not None and (not isinstance(socket, str) or "'" in socket):
        raise ValueError(f"tmux_socket: expected a tmux socket name or path, got {socket!r}")
    enabled = item.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValueError(f"enabled: expected true or false, got {enabled!r}")
    return Host(name, ssh.strip(), (socket or "").strip() or None, enabled)


_ARG_OPTIONS = set("BbcDEeFIiJLlmOoPpQRSWw")   # ssh's options that take a value


def _destination(words: list[str]) -> str | None:
    """The first word that is not an option or an option's value: where ssh connects."""
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-") and len(word) > 1:
            skip = word[-1] in _ARG_OPTIONS and len(word) == 2   # `-p 22`, not `-p22`
        else:
            return word
    return None


def parse_hosts(raw: Any, where: str) -> tuple[tuple[Host, ...], list[str]]:
    """The hosts that parse, and one line per problem (a bad host is skipped, not fatal)."""
    if not isinstance(raw, list):
        return (), [f"{where}: hosts: expected [[hosts]] tables"]
    hosts: list[Host] = []
    errors: list[str] = []
    for n, item in enumerate(raw, 1):
        try:
            host = parse_host(item)
        except ValueError as exc:
            errors.append(f"{where}: hosts[{n}]: {exc}")
            continue
        if any(h.name == host.name for h in hosts):
            errors.append(f"{where}: hosts[{n}]: a host named {host.name!r} already exists")
            continue
        hosts.append(host)
    return tuple(hosts), errors


def host_of(key: str, remote: set[str] | frozenset[str]) -> str:
    """The host a terminal key belongs to: `gpu1:%3` → gpu1 when gpu1 is a remote host,
    anything else (`default:%3`) → local."""
    head = key.split(":", 1)[0]
    return head if head in remote else LOCAL
