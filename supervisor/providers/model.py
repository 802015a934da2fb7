"""Provider records: one agent CLI described as data.

A provider file (`resources/providers/<name>.toml`, or the user's own in the config dir)
becomes one frozen `Provider`. Every command is an argv template; the placeholders each may use
are listed in `PLACEHOLDERS` and checked at load, so a typo fails loudly with the file and field.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pitcrew.supervisor.core.rules import Command, ScreenRules
from pitcrew.supervisor.core.usage import UsageFields

# The agent CLIs that may read another agent's screen as checkers (SPEC §3), in the order
# used when the user chose none.
CHECKER_CANDIDATES = ("claude", "codex", "gemini", "opencode", "qwen", "kimi", "grok", "hermes")

# The placeholders each argv template may use. `{model_args}` is not a value but a splice:
# the element is replaced by the provider's model arguments when a model is chosen, and
# dropped when the CLI's default model is used.
PLACEHOLDERS: Mapping[str, frozenset[str]] = {
    "launch.argv": frozenset({"model_args"}),
    "launch.session_id": frozenset({"session_id"}),
    "launch.model": frozenset({"model"}),
    "resume.by_id": frozenset({"session_id", "model_args"}),
    "resume.latest": frozenset({"model_args"}),
    "checker.argv": frozenset({"model_args", "prompt"}),
    "checker.model": frozenset({"model"}),
    # {cwd_sha256:.12} keeps the first 12 characters (a Python format spec)
    "sessions.glob": frozenset(
        {"home", "config_dir", "cwd", "cwd_escaped", "cwd_basename", "cwd_sha256", "cwd_md5",
         "cwd_urlencoded"}
    ),
}
# A session id as CLIs make them (uuids, ulids, hex, `ses_…`): letters, digits, . _ : -
DEFAULT_SESSION_ID = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}"


@dataclass(frozen=True, slots=True)
class ProcessMatch:
    """How to recognise the agent's process in a pane's process tree.

    `names` are compared with the process name, the executable's basename and argv[0]'s
    basename. `argv` patterns are searched in every argv element, which is how a node- or
    python-wrapped CLI (`node …/cli.js`) is recognised.
    """

    names: tuple[str, ...]
    argv: tuple[re.Pattern[str], ...] = ()


@dataclass(frozen=True, slots=True)
class Launch:
    argv: Command
    model: tuple[str, ...] = ()           # e.g. ("--model", "{model}")
    session_id: tuple[str, ...] = ()      # pre-assign a session id at launch, if the CLI can

    def model_args(self, model: str | None) -> tuple[str, ...]:
        if not model or not self.model:
            return ()
        return tuple(part.replace("{model}", model) for part in self.model)


@dataclass(frozen=True, slots=True)
class Resume:
    """How to bring a session back. `unsupported` explains why a CLI cannot resume."""

    by_id: Command | None = None
    latest: Command | None = None
    unsupported: str | None = None

    @property
    def supported(self) -> bool:
        return self.by_id is not None or self.latest is not None


@dataclass(frozen=True, slots=True)
class FieldRef:
    """Where a session file keeps a value: `stem`, `parent`, `regex:…`, `json:a.b`, `yaml:key`."""

    kind: str
    arg: str = ""


@dataclass(frozen=True, slots=True)
class SqliteQuery:
    path: str    # may use ~ and {config_dir}
    query: str   # one `?` parameter: the working directory; returns the session id first


@dataclass(frozen=True, slots=True)
class SessionStore:
    """Where a CLI keeps its sessions and how a working directory maps to a session id."""

    config_dir: str = ""                  # "~/.claude"; {config_dir} in globs
    config_dir_env: str | None = None     # env var that moves config_dir (CLAUDE_CONFIG_DIR)
    glob: str | None = None
    cwd_escape: tuple[str, str] = ("[^A-Za-z0-9-]", "-")
    id: FieldRef = field(default_factory=lambda: FieldRef("stem"))
    cwd: FieldRef | None = None           # a field holding the session's cwd, checked exactly
    cwd_hash: str | None = None           # "sha256": that field holds a hash of the cwd
    sqlite: SqliteQuery | None = None
    scan_limit: int = 200                 # newest files examined when a cwd field must be read
    # what a session id of this CLI looks like: an id that does not match is never typed
    id_pattern: str = DEFAULT_SESSION_ID

    @property
    def supported(self) -> bool:
        return self.glob is not None or self.sqlite is not None


@dataclass(frozen=True, slots=True)
class Checker:
    """Running the CLI headless, read-only, as a checker of another agent's screen."""

    argv: Command
    model: tuple[str, ...] = ()
    prompt: str = "stdin"                 # "stdin" or "arg" (then argv holds {prompt})
    env: tuple[str, ...] = ()             # environment variables passed through (API keys)
    timeout: float = 90.0

    def model_args(self, model: str | None) -> tuple[str, ...]:
        if not model or not self.model:
            return ()
        return tuple(part.replace("{model}", model) for part in self.model)


@dataclass(frozen=True, slots=True)
class RecordPick:
    """Where a session transcript keeps one kind of record (a tool call, or its result).

    `record`: field = value conditions a JSON line must meet (a value may list `a|b`);
    `items`: the dotted path to the list (or the one object) of items inside it, "" for the
    record itself; `item`: conditions on an item. The rest are dotted paths in an item (a
    path may list `a|b`, the first present wins): `name` and `args` of a call, `id` pairing a
    result with its call, `output` of a result, and `error` — a path whose true value marks
    a failed call, or `regex:…` searched in `output`.
    """

    record: tuple[tuple[str, tuple[str, ...]], ...] = ()
    items: str = ""
    item: tuple[tuple[str, tuple[str, ...]], ...] = ()
    name: str = ""
    args: str = ""
    id: str = ""
    output: str = ""
    error: str = ""


@dataclass(frozen=True, slots=True)
class TranscriptSpec:
    """The tool calls (and their results) in a CLI's session file, for loop detection."""

    call: RecordPick
    result: RecordPick | None = None


class DeferredScreen:
    """Screen rules built on first read, then kept: every reader, on any thread, gets the
    same object (providers/screens.py says why they wait). Two are equal when their rules
    are."""

    __slots__ = ("_build", "_lock", "_rules")

    def __init__(self, build: Callable[[], ScreenRules]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._rules: ScreenRules | None = None

    @property
    def built(self) -> bool:
        return self._rules is not None

    def get(self) -> ScreenRules:
        if self._rules is None:
            with self._lock:
                if self._rules is None:
                    self._rules = self._build()
        return self._rules

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DeferredScreen):
            return self.get() == other.get()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as unhashable as the rules it holds


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    display_name: str
    process: ProcessMatch
    launch: Launch
    resume: Resume
    sessions: SessionStore
    screen_rules: ScreenRules | DeferredScreen   # read it as `screen`
    checker: Checker | None = None
    transcript: TranscriptSpec | None = None
    usage: UsageFields | None = None      # where its session files record token usage
    homepage: str = ""
    install: str = ""
    verified: Mapping[str, str] = field(default_factory=dict)
    source: Path | None = None

    @property
    def screen(self) -> ScreenRules:
        """What the CLI's own UI looks like; compiled on first read when loaded from a file."""
        rules = self.screen_rules
        return rules if isinstance(rules, ScreenRules) else rules.get()

    @property
    def can_check(self) -> bool:
        """Whether this CLI may be a checker: one of the CLIs SPEC §3 names *and* it has a
        `[checker]` table. A table alone is not enough (aider's and copilot's record how
        they run headless, but they are not checkers); every place that offers, accepts or
        runs a checker asks this one question."""
        return self.checker is not None and self.name in CHECKER_CANDIDATES

    def supports(self) -> dict[str, bool]:
        """What this provider can do, for `pitcrew providers`."""
        return {
            "resume_by_id": self.resume.by_id is not None,
            "resume_latest": self.resume.latest is not None,
            "session_files": self.sessions.supported,
            "checker": self.can_check,
            "continue_in_place": self.screen.continue_message is not None,
            "launch_with_session_id": bool(self.launch.session_id),
            "token_usage": self.usage is not None,
        }
