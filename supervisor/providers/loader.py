"""Loading provider files into `Provider` records, loudly.

Shipped files live in `resources/providers/`; a user's files in `<config dir>/providers/`
add providers or override shipped ones (tables merge key by key, any other value replaces).
`_common.toml` holds screen markers every provider inherits unless it sets
`screen.inherit_common = false`. A file that fails to load is reported as one line naming the
file and field, and the others still load: a broken user override falls back to the shipped
definition, so a typo never loses a provider.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pitcrew.supervisor.core.errors import ConfigError
from pitcrew.supervisor.core.rules import ScreenRules
from pitcrew.supervisor.core.usage import UsageFields
from pitcrew.supervisor.providers.model import (
    DEFAULT_SESSION_ID,
    Checker,
    DeferredScreen,
    FieldRef,
    Launch,
    ProcessMatch,
    Provider,
    RecordPick,
    Resume,
    SessionStore,
    SqliteQuery,
    TranscriptSpec,
)
from pitcrew.supervisor.providers.screens import KnownPatterns, deferred_screen
from pitcrew.supervisor.providers.table import REQUIRED, Table, command, placeholders, regexes

SCHEMA = 1
COMMON = "_common"
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_FIELD_KINDS = ("stem", "parent", "regex", "json", "yaml")


@dataclass(frozen=True, slots=True)
class Registry:
    """The providers that loaded, and one message per file that did not."""

    providers: Mapping[str, Provider]
    errors: tuple[str, ...]
    generic: ScreenRules | DeferredScreen = field(default_factory=ScreenRules)

    @property
    def generic_screen(self) -> ScreenRules:
        """The common markers alone, for a screen no provider claims."""
        return self.generic if isinstance(self.generic, ScreenRules) else self.generic.get()

    def get(self, name: str) -> Provider | None:
        return self.providers.get(name)

    def __iter__(self) -> Any:
        return iter(self.providers.values())


def load_registry(
    shipped_dir: Path, user_dir: Path | None = None, known_patterns: Path | None = None
) -> Registry:
    """Every provider in the two folders. `known_patterns`: the cache file of patterns that
    compiled before (providers/screens.py), which spares checking them again."""
    known = KnownPatterns(known_patterns)
    registry = _load(shipped_dir, user_dir, known)
    known.save()
    return registry


def _load(shipped_dir: Path, user_dir: Path | None, known: KnownPatterns) -> Registry:
    errors: list[str] = []
    shipped = _read_dir(shipped_dir, "providers", errors)
    user = _read_dir(user_dir, "providers (user)", errors) if user_dir else {}
    common: dict[str, Any] = shipped.pop(COMMON, ({}, None))[0]
    if COMMON in user:
        common = _merge(common, user.pop(COMMON)[0])
    generic: ScreenRules | DeferredScreen
    try:  # checked once up front: a broken common file must not take every provider with it
        generic = deferred_screen(Table({}, "providers/_common.toml", "screen"),
                                  common.get("screen", {}), "providers/_common.toml", known)
    except ConfigError as exc:
        errors.append(f"{exc} (common markers not used)")
        common, generic = {}, ScreenRules()
    providers: dict[str, Provider] = {}
    for name in sorted(shipped.keys() | user.keys()):
        base, base_src = shipped.get(name, ({}, None))
        over, over_src = user.get(name, ({}, None))
        if over:
            try:
                providers[name] = build(name, _merge(base, over), common, over_src, known)
                continue
            except ConfigError as exc:
                errors.append(f"{exc} (using the shipped definition)" if base else str(exc))
        if base:
            try:
                providers[name] = build(name, base, common, base_src, known)
            except ConfigError as exc:
                errors.append(str(exc))
    return Registry(providers, tuple(errors), generic)


def _read_dir(
    folder: Path | None, label: str, errors: list[str]
) -> dict[str, tuple[dict[str, Any], Path]]:
    found: dict[str, tuple[dict[str, Any], Path]] = {}
    if folder is None or not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.toml")):
        where = f"{label}/{path.name}"
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(f"{where}: cannot read: {exc}")
            continue
        except tomllib.TOMLDecodeError as exc:
            errors.append(f"{where}: not valid TOML: {exc}")
            continue
        found[path.stem] = (data, path)
    return found


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for key, value in over.items():
            merged[key] = _merge(base.get(key), value) if key in base else value
        return merged
    return over


def build(
    name: str,
    data: Mapping[str, Any],
    common: Mapping[str, Any] | None = None,
    source: Path | None = None,
    known: KnownPatterns | None = None,
) -> Provider:
    """Turn one provider file's data into a `Provider`, or raise `ConfigError`. Its screen
    rules are checked now and compiled when first read (providers/screens.py)."""
    where = f"providers/{source.name if source else name + '.toml'}"
    if not _NAME.match(name):
        raise ConfigError(where, f"bad provider name {name!r} (use lowercase letters, digits, -)")
    top = Table(data, where)
    schema = top.integer("schema", SCHEMA)
    if schema != SCHEMA:
        raise ConfigError(where, f"schema: this Pitcrew reads schema {SCHEMA}, not {schema}")
    provider = Provider(
        name=name,
        display_name=top.text("display_name", name),
        homepage=top.text("homepage", ""),
        install=top.text("install", ""),
        process=_process(top.table("process", required=True)),
        launch=_launch(top.table("launch", required=True)),
        resume=_resume(top.table("resume", required=True)),
        sessions=_sessions(top.table("sessions")),
        screen_rules=deferred_screen(top.table("screen"), (common or {}).get("screen", {}),
                                     where, known or KnownPatterns()),
        checker=_checker(top.table("checker")) if "checker" in data else None,
        transcript=_transcript(top.table("transcript")) if "transcript" in data else None,
        usage=_usage(top.table("usage")) if "usage" in data else None,
        verified=_strings_map(top.table("verified")),
        source=source,
    )
    top.done()
    return provider


def _process(t: Table) -> ProcessMatch:
    names = t.strings("names")
    argv = regexes(t, "argv", t.strings("argv"))
    if not names and not argv:
        raise t.fail("names", "give process names or argv patterns")
    t.done()
    return ProcessMatch(names, argv)


def _launch(t: Table) -> Launch:
    argv = command(t, "argv", "launch.argv", required=True)
    assert argv is not None
    model = t.strings("model")
    placeholders(t, "model", model, "launch.model")
    session_id = t.strings("session_id")
    placeholders(t, "session_id", session_id, "launch.session_id")
    t.done()
    return Launch(argv, model, session_id)


def _resume(t: Table) -> Resume:
    resume = Resume(
        by_id=command(t, "by_id", "resume.by_id"),
        latest=command(t, "latest", "resume.latest"),
        unsupported=t.text("unsupported"),
    )
    t.done()
    if resume.supported and resume.unsupported:
        raise t.fail("unsupported", "set either a resume command or `unsupported`, not both")
    if not resume.supported and not resume.unsupported:
        raise t.fail("by_id", "give by_id and/or latest, or `unsupported = \"why\"`")
    if resume.by_id and "{session_id}" not in " ".join(resume.by_id.argv):
        raise t.fail("by_id", "must contain {session_id}")
    return resume


def _field_ref(t: Table, key: str, default: str | None) -> FieldRef | None:
    raw = t.text(key, default)
    if raw is None:
        return None
    kind, _, arg = raw.partition(":")
    if kind not in _FIELD_KINDS:
        raise t.fail(key, f"expected one of {', '.join(_FIELD_KINDS)} (e.g. json:payload.cwd)")
    if kind in ("regex", "json", "yaml") and not arg:
        raise t.fail(key, f"{kind}: needs an argument, e.g. {kind}:…")
    if kind == "regex":
        try:
            if re.compile(arg).groups < 1:
                raise t.fail(key, "regex needs one capturing group")
        except re.error as exc:
            raise t.fail(key, f"bad regex: {exc}") from None
    return FieldRef(kind, arg)


def _cwd_hash(t: Table) -> str | None:
    value = t.text("cwd_hash")
    if value is not None and value != "sha256":
        raise t.fail("cwd_hash", "only \"sha256\" is supported")
    return value  # type: ignore[no-any-return]


def _sessions(t: Table) -> SessionStore:
    glob = t.text("glob")
    if glob is not None:
        placeholders(t, "glob", [glob], "sessions.glob")
    escape = t.strings("cwd_escape", ("[^A-Za-z0-9-]", "-"))
    if len(escape) != 2:
        raise t.fail("cwd_escape", "expected [pattern, replacement]")
    regexes(t, "cwd_escape", escape[:1])
    sqlite = None
    if "sqlite" in t.data:
        s = t.table("sqlite")
        sqlite = SqliteQuery(s.text("path", REQUIRED), s.text("query", REQUIRED))
        if sqlite.query.count("?") != 1:
            raise s.fail("query", "needs exactly one ? (the working directory)")
        s.done()
    store = SessionStore(
        config_dir=t.text("config_dir", ""),
        config_dir_env=t.text("config_dir_env"),
        glob=glob,
        cwd_escape=(escape[0], escape[1]),
        id=_field_ref(t, "id", "stem") or FieldRef("stem"),
        cwd=_field_ref(t, "cwd", None),
        cwd_hash=_cwd_hash(t),
        sqlite=sqlite,
        scan_limit=t.integer("scan_limit", 200),
        id_pattern=t.text("id_pattern", DEFAULT_SESSION_ID),
    )
    regexes(t, "id_pattern", [store.id_pattern])
    t.done()
    return store


def _checker(t: Table) -> Checker:
    argv = command(t, "argv", "checker.argv", required=True)
    assert argv is not None
    model = t.strings("model")
    placeholders(t, "model", model, "checker.model")
    prompt = t.text("prompt", "stdin")
    if prompt not in ("stdin", "arg"):
        raise t.fail("prompt", "expected \"stdin\" or \"arg\"")
    if (prompt == "arg") != ("{prompt}" in " ".join(argv.argv)):
        raise t.fail("argv", "use {prompt} in argv exactly when prompt = \"arg\"")
    checker = Checker(
        argv=argv,
        model=model,
        prompt=prompt,
        env=t.strings("env"),
        timeout=t.number("timeout", 90.0),
    )
    t.done()
    return checker


def _transcript(t: Table) -> TranscriptSpec:
    call = _pick(t.table("call", required=True), ("name",))
    result = _pick(t.table("result"), ("id",)) if "result" in t.data else None
    if result is not None and not (call.id and result.error):
        raise t.fail("result", "needs `id` in both call and result, and `error`")
    t.done()
    return TranscriptSpec(call, result)


def _pick(t: Table, required: tuple[str, ...]) -> RecordPick:
    def conditions(key: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        table = t.table(key)
        out = tuple((k, tuple(table.text(k).split("|"))) for k in table.data)
        table.done()
        return out

    paths = {k: t.text(k, "") for k in ("items", "name", "args", "id", "output", "error")}
    for key in required:
        if not paths[key]:
            raise t.fail(key, "missing")
    if paths["error"].startswith("regex:"):
        regexes(t, "error", [paths["error"][6:]])
    pick = RecordPick(record=conditions("record"), item=conditions("item"), **paths)
    if not pick.record:
        raise t.fail("record", "give at least one field = value a record must have")
    t.done()
    return pick


def _usage(t: Table) -> UsageFields:
    """`[usage]`: where the session file records token usage (core/usage.py says how)."""
    match = t.table("match")
    pairs = tuple((k, match.text(k)) for k in list(match.data))
    match.done()
    usage = UsageFields(
        at=t.text("at", REQUIRED), input=t.strings("input", REQUIRED),
        output=t.strings("output", REQUIRED), cached=t.strings("cached"), match=pairs,
        key=t.text("key"), cumulative=t.flag("cumulative", False),
        time=t.text("time", "timestamp"), cost=t.text("cost"), expand=t.strings("expand"))
    t.done()
    return usage


def _strings_map(t: Table) -> dict[str, str]:
    out = {}
    for key in t.data:
        out[key] = t.text(key)
    t.done()
    return out
