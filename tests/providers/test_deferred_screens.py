"""Screen rules are checked when a provider file loads and compiled only when first read; the
patterns that compiled once are remembered in the cache folder and not checked again."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from pitcrew import resources
from pitcrew.supervisor.providers import table
from pitcrew.supervisor.providers.loader import load_registry
from pitcrew.supervisor.providers.model import DeferredScreen, Provider

SHIPPED = resources.providers_dir()
MINIMAL = """
schema = 1
[process]
names = ["mini"]
[launch]
argv = ["mini"]
[resume]
by_id = ["mini", "--resume", "{session_id}"]
[screen.markers]
busy = ['mini is thinking \\d+']
"""


def built(p: Provider) -> bool:
    assert isinstance(p.screen_rules, DeferredScreen)
    return p.screen_rules.built


def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every pattern the loader compiles from now on (its own cache bypassed)."""
    seen: list[str] = []

    def counting(value: str) -> re.Pattern[str]:
        seen.append(value)
        return re.compile(value, re.IGNORECASE)

    monkeypatch.setattr(table, "_compiled", counting)
    return seen


def test_no_screen_is_compiled_until_its_provider_is_read(tmp_path: Path) -> None:
    registry = load_registry(SHIPPED, None, tmp_path / "known.json")
    assert registry.errors == ()
    assert not any(built(p) for p in registry)
    assert registry.providers["codex"].screen.markers          # read: compiled now
    assert [p.name for p in registry if built(p)] == ["codex"]


def test_a_deferred_screen_is_the_screen_an_eager_load_built() -> None:
    a, b = load_registry(SHIPPED), load_registry(SHIPPED)
    assert a.providers == b.providers
    assert a.generic_screen == b.generic_screen and a.generic_screen.markers
    assert a.providers["claude"].screen is a.providers["claude"].screen   # built once


def test_patterns_that_compiled_before_are_not_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, known = tmp_path / "user", tmp_path / "cache" / "known.json"
    user.mkdir()
    (user / "mini.toml").write_text(MINIMAL)
    seen = compiles(monkeypatch)
    load_registry(SHIPPED, user, known)
    assert "mini is thinking \\d+" in seen and known.exists()
    seen.clear()
    registry = load_registry(SHIPPED, user, known)
    assert registry.errors == ()
    markers = tomllib.loads((SHIPPED / "_common.toml").read_text())["screen"]["markers"]
    assert not set(seen) & {p for patterns in markers.values() for p in patterns}
    assert "mini is thinking \\d+" not in seen
    assert registry.providers["mini"].screen.markers           # they compile when read
    assert "mini is thinking \\d+" in seen


def test_a_bad_pattern_is_one_line_every_time_and_never_remembered(tmp_path: Path) -> None:
    user, known = tmp_path / "user", tmp_path / "known.json"
    user.mkdir()
    (user / "mini.toml").write_text(MINIMAL.replace("\\d+']", "(unclosed']"))
    for _ in range(2):
        registry = load_registry(SHIPPED, user, known)
        assert registry.errors == (
            "providers/mini.toml: screen.markers.busy: bad regex "
            "'mini is thinking (unclosed': missing ), unterminated subpattern at position 17",)
        assert "mini" not in registry.providers
    assert "mini is thinking (unclosed" not in json.loads(known.read_text())["patterns"]


@pytest.mark.parametrize("content", [
    "not json", "[]", '{"stamp": {"format": 0}, "patterns": ["(unclosed"]}',
    '{"stamp": null, "patterns": 7}'])
def test_a_stale_or_broken_cache_file_means_checking_everything(
    tmp_path: Path, content: str
) -> None:
    user, known = tmp_path / "user", tmp_path / "known.json"
    user.mkdir()
    (user / "mini.toml").write_text(MINIMAL.replace("\\d+']", "(unclosed']"))
    known.write_text(content)
    registry = load_registry(SHIPPED, user, known)
    assert len(registry.errors) == 1 and "bad regex" in registry.errors[0]
    assert json.loads(known.read_text())["stamp"]["format"] >= 1     # rewritten


def test_an_unwritable_cache_folder_costs_nothing_but_time(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    registry = load_registry(SHIPPED, None, blocker / "known.json")
    assert registry.errors == () and registry.providers
