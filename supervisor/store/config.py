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
from pitcrew.supervisor.core.loops import DEFAULT_RULE, LoopRule
from pitcrew.supervisor.core.seats import AgentChoice, Seat, parse_choice, parse_seats
from pitcrew.supervisor.core.timeouts import Overrides, Timeouts, parse_overrides, resolve
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
# After a restart of tmux or of the machine, agents Pitcrew recorded are missing: "ask" —
# say how many can be put back (`pitcrew restore`); "auto" — put them back when Pitcrew
# starts; "off" — neither. See docs/restore.md.
restore = "ask"

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
# (quiet_after = 180, the old name of [timeouts] idle, still works; idle wins over it.)

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

[notifications]
# "Needs you": a desktop notification when an agent waits on you (a question, a permission
# prompt, a picker, a login, a draft left unsent, Autopilot waiting on you) — never for the
# pane you are looking at in tmux, and bursts said as one.
needs_you = true
# Seconds an agent waits before that notification (an answer you are already typing never
# triggers one).
needs_you_after = 20
# Also notify when an agent finished its task and you have not looked at it since.
task_finished = false

[timeouts]
# Task timeouts, in seconds; false (or 0) turns one off. A table per provider overrides these
# ([timeouts.claude] hard = 3600), and a seat's `timeouts = { … }` overrides both.
# idle: no progress for that long (spinners and timers do not count) -> the screen is checked.
# With Manual timer (no checker): nothing on screen moved for that long, not even a spinner.
idle = 180
# stalled: Manual timer only: spinners and timers alone moved for that long -> stuck.
stalled = 900
# soft: the task has run that long -> a notification and an Activity card.
soft = 1200
# also type "Finish the current step and save your work; you will be stopped soon." then.
wrap_up = false
# hard: the task has run that long -> Autopilot stops acting for that terminal (the agent
# keeps running) and tells you.
hard = 9000
# not_started: a delivered message that never made the agent busy -> a failed delivery.
not_started = 300

[loops]
# Stuck-loop detection: the same step (or a cycle of up to max_period steps) repeated at least
# `cycles` times within the last `window` steps. First a diagnosis, then a hold if it persists.
enabled = true
window = 12
cycles = 3
max_period = 4

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
    restore: str = "ask"                # "ask" | "auto" | "off" (docs/restore.md)
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
    timeouts: Overrides = ()            # [timeouts]: over quiet_after and the defaults
    provider_timeouts: tuple[tuple[str, Overrides], ...] = ()   # [timeouts.<provider>]
    loops: bool = True
    loop_window: int = 12
    loop_cycles: int = 3
    loop_max_period: int = 4
    needs_you: bool = True              # [notifications]: needs-you notifications
    needs_you_after: float = 20.0       # … after this many seconds of waiting (0–3600)
    task_finished: bool = False         # … and "finished its task" ones
    source: Path | None = field(default=None, compare=False)

    def timeouts_for(self, provider: str, seat: Seat | None = None) -> Timeouts:
        """One terminal's timeouts: defaults < quiet_after < [timeouts] < its provider's
        table < its seat's."""
        per_provider = dict(self.provider_timeouts).get(provider, ())
        return resolve(Timeouts(idle=self.quiet_after), self.timeouts, per_provider,
                       seat.timeouts if seat is not None else ())

    def loop_rule(self) -> LoopRule | None:
        """The loop detector's window, or None when it is off."""
        if not self.loops:
            return None
        if (self.loop_window, self.loop_cycles, self.loop_max_period) == (
                DEFAULT_RULE.window, DEFAULT_RULE.min_cycles, DEFAULT_RULE.max_period):
            return DEFAULT_RULE
        return LoopRule(self.loop_window, self.loop_cycles, self.loop_max_period)


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
    if isinstance(data.get("timeouts"), dict):
        config, timeout_errors = _timeouts(config, data["timeouts"], where)
        errors.extend(timeout_errors)
    elif "timeouts" in data:
        errors.append(f"{where}: timeouts: expected a table; using defaults")
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
        if section in ("seats", "timeouts", "hosts"):
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


def _timeouts(config: Config, table: dict[str, Any], where: str
              ) -> tuple[Config, list[str]]:
    """`[timeouts]` and its `[timeouts.<provider>]` tables; a bad key is one line and keeps
    its default."""
    flat = {k: v for k, v in table.items() if not isinstance(v, dict)}
    overrides, problems = parse_overrides(flat)
    errors = [f"{where}: timeouts.{p}; using the default" for p in problems]
    per_provider: list[tuple[str, Overrides]] = []
    for name, sub in table.items():
        if isinstance(sub, dict):
            sub_overrides, sub_problems = parse_overrides(sub)
            errors.extend(f"{where}: timeouts.{name}.{p}; using the default"
                          for p in sub_problems)
            per_provider.append((name, sub_overrides))
    return replace(config, timeouts=overrides, provider_timeouts=tuple(per_provider)), errors


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


def _count(low: int, high: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"expected a whole number from {low} to {high}, got {value!r}")
        return value
    return convert


def _restore(value: Any) -> str:
    if value not in ("ask", "auto", "off"):
        raise ValueError(f'expected "ask", "auto" or "off", got {value!r}')
    return str(value)


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
    ("watch", "restore"): ("restore", _restore),
    ("providers", "disabled"): ("disabled_providers", _names),
    ("autopilot", "enabled"): ("autopilot", _flag),
    ("autopilot", "ask_to_continue"): ("ask_to_continue", _flag),
    ("autopilot", "quiet_after"): ("quiet_after", _quiet),
    ("diagnosis", "enabled"): ("diagnosis", _flag),
    ("diagnosis", "mode"): ("diagnosis_mode", _mode),
    ("diagnosis", "checkers"): ("checkers", _checkers),
    ("diagnosis", "checker_timeout"): ("checker_timeout", _seconds(5, 600)),
    ("diagnosis", "chain_timeout"): ("chain_timeout", _seconds(10, 1800)),
    ("loops", "enabled"): ("loops", _flag),
    ("loops", "window"): ("loop_window", _count(3, 100)),
    ("loops", "cycles"): ("loop_cycles", _count(2, 50)),
    ("loops", "max_period"): ("loop_max_period", _count(1, 10)),
    ("notifications", "needs_you"): ("needs_you", _flag),
    ("notifications", "needs_you_after"): ("needs_you_after", _seconds(0, 3600)),
    ("notifications", "task_finished"): ("task_finished", _flag),
}


def check_setting(section: str, key: str, value: Any) -> None:
    """Raise ValueError (with the loader's wording) unless `value` is valid for the key."""
    field = _FIELDS.get((section, key))
    if field is None:
        raise ValueError(f"unknown setting {section}.{key}")
    field[1](value)
