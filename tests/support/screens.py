"""The screen fixtures (tests/fixtures/screens/**): real captures and reported phrasings."""

from __future__ import annotations

import datetime as dt
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

from pitcrew import resources
from pitcrew.supervisor.core.classifier import classify
from pitcrew.supervisor.core.rules import ScreenRules
from pitcrew.supervisor.core.screen import Classification
from pitcrew.supervisor.providers.loader import Registry, load_registry
from tests.support.screen_groups import Member, grouped, keys

SCREENS = Path(__file__).resolve().parent.parent / "fixtures" / "screens"
DEFAULT_AT = dt.datetime(2026, 11, 30, 14, 0, tzinfo=dt.UTC)
FAKE_AGENT_DIR = Path(__file__).resolve().parent.parent / "fake_agent"


@dataclass(frozen=True)
class Fixture:
    path: Path
    provider: str
    state: str
    origin: str
    captured_at: dt.datetime
    timezone: str
    reset_at: dt.datetime | None
    retry_after: float | None
    evidence: str | None
    hard_negative: bool
    source: str
    cursor: tuple[int, int] | None = None   # (cursor_x, cursor_y) from tmux, when recorded
    group_keys: tuple[str, ...] = ()       # its source (tests/support/screen_groups.py)

    @property
    def split(self) -> str:
        """"heldout" (never tuned on) or "tuning" (tests/fixtures/screens/split.py)."""
        return "heldout" if self.path.relative_to(SCREENS).parts[0] == "heldout" else "tuning"

    @property
    def rel(self) -> str:
        """Its path under the tree without `heldout/` and suffix (screen_groups.Member.rel)."""
        parts = self.path.relative_to(SCREENS).with_suffix("").parts
        return "/".join(parts[1:] if parts[0] == "heldout" else parts)

    @property
    def id(self) -> str:
        return str(self.path.relative_to(SCREENS).with_suffix(""))

    @property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")


def _aware(value: object, zone: str) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    assert isinstance(value, dt.datetime)
    return value if value.tzinfo else value.replace(tzinfo=ZoneInfo(zone))


@cache
def all_fixtures() -> tuple[Fixture, ...]:
    found = []
    for screen in sorted(SCREENS.rglob("*.screen")):
        if screen.relative_to(SCREENS).parts[0] == "incoming":
            continue  # not split yet (split.py --source incoming)
        meta = tomllib.loads(screen.with_suffix(".toml").read_text(encoding="utf-8"))
        parts = screen.relative_to(SCREENS).with_suffix("").parts
        rel = "/".join(parts[1:] if parts[0] == "heldout" else parts)
        zone = meta.get("timezone", "UTC")
        found.append(Fixture(
            path=screen,
            provider=meta["provider"],
            state=meta["state"],
            origin=meta.get("origin", "captured"),
            captured_at=_aware(meta.get("captured_at"), zone) or DEFAULT_AT,
            timezone=zone,
            reset_at=_aware(meta.get("reset_at"), zone),
            retry_after=meta.get("retry_after"),
            evidence=meta.get("evidence"),
            hard_negative=bool(meta.get("hard_negative", False)),
            source=meta.get("source", ""),
            cursor=(meta.get("cursor_x", 0), meta["cursor_y"]) if "cursor_y" in meta else None,
            group_keys=keys(rel, meta),
        ))
    return tuple(found)


@cache
def registry() -> Registry:
    return load_registry(resources.providers_dir(), FAKE_AGENT_DIR)


def rules_for(provider: str) -> ScreenRules:
    p = registry().get(provider)
    return p.screen if p else registry().generic_screen


def run(fx: Fixture) -> Classification:
    return classify(fx.text, rules_for(fx.provider), fx.captured_at, ZoneInfo(fx.timezone),
                    cursor=fx.cursor)


def groups(fixtures: tuple[Fixture, ...] | list[Fixture]) -> dict[str, list[Fixture]]:
    """Fixtures by source group (tests/support/screen_groups.py)."""
    by_rel = {fx.rel: fx for fx in fixtures}
    return {name: [by_rel[m.rel] for m in group] for name, group in grouped(
        Member(fx.rel, fx.state, fx.group_keys) for fx in fixtures).items()}
