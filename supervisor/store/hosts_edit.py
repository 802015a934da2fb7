"""Adding and removing a `[[hosts]]` entry in the user's `config.toml`, keeping the rest.

`pitcrew hosts add` appends one `[[hosts]]` table at the end of the file; `remove` cuts out
exactly the lines of the table whose `name` matches (from its header to the next header),
leaving every comment and setting around it alone. Like `config_edit`, a file that does not
parse is never written into, and an edit is only written when it reads back as meant.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import tomli_w

from pitcrew.supervisor.core.hosts import Host, parse_hosts
from pitcrew.supervisor.store.config_edit import UneditableConfig, _read, _write, statements

_HEADER = re.compile(r"^\s*\[\[?([^\[\]]+)\]\]?\s*(#.*)?$")


def hosts_in(path: Path) -> tuple[Host, ...]:
    data = tomllib.loads(_read(path))
    return parse_hosts(data.get("hosts", []), path.name)[0]


def add_host(path: Path, host: Host) -> None:
    """Append `host`; UneditableConfig when the file is broken or the name is taken."""
    text = _read(path)
    if any(h.name == host.name for h in hosts_in(path)):
        raise UneditableConfig(path.name, f"a host named {host.name!r} already exists")
    table: dict[str, object] = {"name": host.name, "ssh": host.ssh}
    if host.tmux_socket:
        table["tmux_socket"] = host.tmux_socket
    if not host.enabled:
        table["enabled"] = False
    block = "[[hosts]]\n" + tomli_w.dumps(table)
    edited = text.rstrip("\n") + "\n\n" + block
    _check(path, edited, lambda hosts: any(h == host for h in hosts))
    _write(path, edited)


def remove_host(path: Path, name: str) -> bool:
    """Remove the host named `name`; False when there is none."""
    lines = _read(path).splitlines()
    spans = statements(lines)
    # headers only where a statement starts: a line inside a multi-line value is none
    heads = [i for i, _ in spans if _HEADER.match(lines[i])]
    start = end = None
    for k, i in enumerate(heads):
        if start is not None:
            end = i
            break
        if lines[i].strip().startswith("[[hosts]]"):
            block_end = heads[k + 1] if k + 1 < len(heads) else len(lines)
            table = tomllib.loads("\n".join(lines[i + 1:block_end]) or "")
            if table.get("name") == name:
                start = i
    if start is None:
        return False
    end = len(lines) if end is None else end
    # comments after its last setting are the user's notes on what follows: they stay
    end = max((j + 1 for i, j in spans if start <= i < end
               and lines[i].strip() and not lines[i].lstrip().startswith("#")), default=end)
    while start > 0 and not lines[start - 1].strip():
        start -= 1                      # the blank line that separated it goes too
    edited = "\n".join(lines[:start] + lines[end:]).rstrip("\n") + "\n"
    _check(path, edited, lambda hosts: all(h.name != name for h in hosts))
    _write(path, edited)
    return True


def _check(path: Path, edited: str, holds: object) -> None:
    try:
        data = tomllib.loads(edited)
    except tomllib.TOMLDecodeError:
        data = None
    hosts = parse_hosts(data.get("hosts", []), path.name)[0] if isinstance(data, dict) else None
    if hosts is None or not callable(holds) or not holds(hosts):
        raise UneditableConfig(path.name, "cannot change [[hosts]] here without breaking the "
                               "file; edit it by hand")
