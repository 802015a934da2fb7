"""The user's `config.toml`: what Pitcrew watches and how.

Every setting has a default, documented next to it in `DEFAULT_CONFIG_TEXT` (written out for
the user on first run). A bad value is reported as one line naming the file and the field and
that one setting keeps its default; a file that is not TOML at all leaves every default in
place. Pitcrew never refuses to start over its config, and never rewrites a file the user
broke.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pitcrew.supervisor.core.hosts import Host, parse_hosts
from pitcrew.supervisor.core.seats import AgentChoice, Seat, parse_choice, parse_seats
from pitcrew.supervisor.providers.model import CHECKER_CANDIDATES

DEFAULT_CONFIG_TEXT = """\
# Pitcrew settings. Delete a line to get its default back.

[tmux]
# Which tmux server to watch: "" = your default server; a name = `tmux -L name`;
# a path = `tmux -S path`. PITCREW_TMUX_SOCKET and --tmux-socket override it.
socket = ""

[watch]
# Seconds between checks when tmux sends no event (fallback polling).
poll_interval = 2.0

[providers]
# Agent CLIs to ignore, by provider name (see `pitcrew providers`).
disabled = []

[autopilot]
# Autopilot (failed tasks): resume crashed or disconnected agents in their own session.
# Off by default; `pitcrew autopilot on|off` changes it. PITCREW_AUTOPILOT=off in the
# environment turns it off for one launch without changing this.
enabled = false
# After a resume, send the agent one fixed message asking it to continue where it stopped.
ask_to_continue = true
# Seconds without output before a running task counts as quiet and its screen is checked.
quiet_after = 180

[diagnosis]
# Diagnose & restore stuck agents: when messages to an agent keep failing, find out why.
enabled = true
# How to restore: "ai" — a checker CLI reads the stuck screen and recovery runs only when it
# confirms a limit (recommended); "timer" — the timeout alone triggers recovery (fast, fully
# local, cannot tell a stuck agent from a busy one).
mode = "ai"
# Checker CLIs, in order, at most 4: "provider" or "provider:model" from claude, codex,
# gemini, opencode, qwen, kimi, grok, hermes. Empty: the first installed, in that order.
checkers = []
# Seconds one checker may take before its processes are killed and the next is asked.
checker_timeout = 60
# Seconds a whole diagnosis may take, every checker together.
chain_timeout = 150

# Seats: a role with a working directory, a primary agent and ordered backups.
# [[seats]]
# name = "api"
# cwd = "~/work/api"
# primary = "claude:opus"
# backups = ["codex", "gemini:gemini-2.5-pro"]
# brief = "You own the API service: keep the tests green."
# host = "gpu1"            # `pitcrew launch api` opens it on this remote host ([[hosts]])

# Remote hosts: tmux on other machines, watched over one ssh connection each.
# [[hosts]]
# name = "gpu1"
# ssh = "me@gpu1"          # anything `ssh` accepts: an alias, `-J jump me@gpu1`, `-p 2222 …`
# tmux_socket = ""         # "" = the remote user's default tmux server
# enabled = true
"""


@dataclass(frozen=True, slots=True)
class Config:
    tmux_socket: str | None = None
    poll_interval: float = 2.0
    disabled_providers: tuple[str, ...] = ()
    autopilot: bool = False
    ask_to_continue: bool = True
    quiet_after: float = 180.0
    diagnosis: bool = True
    diagnosis_mode: str = "ai"
    checkers: tuple[AgentChoice, ...] = ()
    checker_timeout: float = 60.0       # one checker's wall-clock budget (5–600 s)
    chain_timeout: float = 150.0        # a whole diagnosis' budget (10–1800 s)
    seats: tuple[Seat, ...] = ()
    hosts: tuple[Host, ...] = ()
    source: Path | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    config: Config
    errors: tuple[str, ...]


def load_config(path: Path) -> LoadedConfig:
    """Read `path`; a missing file is the defaults, a broken one is defaults plus errors."""
    where = path.name
    if not path.exists():
        return LoadedConfig(Config(source=path), ())
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return LoadedConfig(Config(source=path), (f"{where}: cannot read: {exc}",))
    except tomllib.TOMLDecodeError as exc:
        return LoadedConfig(
            Config(source=path), (f"{where}: not valid TOML ({exc}); using defaults",)
        )
    errors: list[str] = []
    config = Config(source=path)
    not_tables = [s for s in dict.fromkeys(s for s, _ in _FIELDS)
                  if not isinstance(data.get(s, {}), dict)]
    errors.extend(f"{where}: {s}: expected a table; using defaults" for s in not_tables)
    for (section, key), (attr, convert) in _FIELDS.items():
        table = data.get(section, {})
        if not isinstance(table, dict):
            continue   # reported once above, not once per setting
        if key not in table:
            continue
        try:
            config = replace(config, **{attr: convert(table[key])})
        except ValueError as exc:
            errors.append(f"{where}: {section}.{key}: {exc}; using the default")
    if "seats" in data:
        seats, seat_errors = parse_seats(data["seats"], where)
        errors.extend(seat_errors)
        config = replace(config, seats=seats)
    if "hosts" in data:
        hosts, host_errors = parse_hosts(data["hosts"], where)
        errors.extend(host_errors)
        config = replace(config, hosts=hosts)
    names = {h.name for h in config.hosts}
    errors.extend(f"{where}: seats: {s.name}: host: no host named {s.host!r} in [[hosts]]; "
                  "the seat is skipped" for s in config.seats if s.host and s.host not in names)
    config = replace(config, seats=tuple(s for s in config.seats
                                         if not s.host or s.host in names))
    for section, table in data.items():
        if section in ("seats", "hosts"):
            continue
        known = {k for (s, k) in _FIELDS if s == section}
        if not known:
            errors.append(f"{where}: {section}: unknown section (ignored)")
        elif isinstance(table, dict):
            errors.extend(
                f"{where}: {section}.{k}: unknown setting (ignored)"
                for k in table
                if k not in known
            )
    return LoadedConfig(config, tuple(errors))


def write_default(path: Path) -> bool:
    """Create the commented default config if there is none; True when it was written."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DEFAULT_CONFIG_TEXT, encoding="utf-8")
    return True


def _socket(value: Any) -> str | None:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value.strip() or None


def _interval(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number of seconds, got {value!r}")
    if not 0.2 <= value <= 600:
        raise ValueError(f"expected 0.2 to 600 seconds, got {value}")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _quiet(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 10 <= value <= 86400:
        raise ValueError(f"expected 10 to 86400 seconds, got {value!r}")
    return float(value)


def _seconds(low: float, high: float) -> Callable[[Any], float]:
    def convert(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                low <= value <= high):
            raise ValueError(f"expected {low:g} to {high:g} seconds, got {value!r}")
        return float(value)
    return convert


def _mode(value: Any) -> str:
    if value not in ("ai", "timer"):
        raise ValueError(f'expected "ai" or "timer", got {value!r}')
    return str(value)




def _checkers(value: Any) -> tuple[AgentChoice, ...]:
    if not isinstance(value, list):
        raise ValueError(f'expected a list like ["claude", "codex:gpt-5"], got {value!r}')
    choices = tuple(parse_choice(v) for v in value)
    for c in choices:
        if c.provider not in CHECKER_CANDIDATES:
            raise ValueError(f"{c.provider!r} cannot be a checker (one of "
                             f"{', '.join(CHECKER_CANDIDATES)})")
    if len(choices) > 4:
        raise ValueError(f"at most 4 checkers, got {len(choices)}")
    return choices


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of provider names, got {value!r}")
    return tuple(value)


_FIELDS: dict[tuple[str, str], tuple[str, Callable[[Any], Any]]] = {
    ("tmux", "socket"): ("tmux_socket", _socket),
    ("watch", "poll_interval"): ("poll_interval", _interval),
    ("providers", "disabled"): ("disabled_providers", _names),
    ("autopilot", "enabled"): ("autopilot", _flag),
    ("autopilot", "ask_to_continue"): ("ask_to_continue", _flag),
    ("autopilot", "quiet_after"): ("quiet_after", _quiet),
    ("diagnosis", "enabled"): ("diagnosis", _flag),
    ("diagnosis", "mode"): ("diagnosis_mode", _mode),
    ("diagnosis", "checkers"): ("checkers", _checkers),
    ("diagnosis", "checker_timeout"): ("checker_timeout", _seconds(5, 600)),
    ("diagnosis", "chain_timeout"): ("chain_timeout", _seconds(10, 1800)),
}


def check_setting(section: str, key: str, value: Any) -> None:
    """Raise ValueError (with the loader's wording) unless `value` is valid for the key."""
    field = _FIELDS.get((section, key))
    if field is None:
        raise ValueError(f"unknown setting {section}.{key}")
    field[1](value)
