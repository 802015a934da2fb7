"""Which screen fixtures come from one source, and which sources are held out (issue #26).

Theory of operation. A held-out screen says little when its near-twin — the same scene at
another CLI version, width or time zone, or another screen of the same bug report — was tuned
on. So fixtures are grouped by *source* and whole groups fall on one side of the split:

* a reported screen's group is its bug report: the `source` URL without `#anchor`/`?query`
  (two screens quoted from one issue thread are one group);
* a captured screen's group is its scene: `<provider>:<slug>` where the slug is the name after
  `<state>__` with the variant tokens taken off — CLI version (`_v2_1_332`), width (`_w200`,
  `_80x24`), time zone (`_tz_berlin`), how long in (`_20s`, `_5min`, `_attempt2`,
  `_late_attempt`, `_later`), `_dead`, `_first_start` — so the label is not part of it
  (a stalled stream read busy at 20 s and connection_lost at 90 s is one scene);
* one capture session that walks through several screens is one group:
  `capture_first_start.py` (its `source` says "(old set)"/"(new set)") and `capture_turns.py`
  (slugs `turns_…`) per provider;
* `group = "…"` in a fixture's `.toml` joins it to any other fixture naming the same group.

A fixture with several of these keys joins every group they name (union-find), so a trust
dialog captured by the main script and by the first-start session is one group.

The held-out groups are chosen per provider folder (`claude`, `reported/claude`, …): the
folder's groups are ordered by their main label, then by a seeded shuffle, and every group at
which the running share crosses the next 30 % step is held out (systematic sampling from a
seeded offset), so every folder and every label gets about 30 %. A label with two or more
groups and none held out then gets one more held out.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

HELDOUT_SHARE = 0.30
_VARIANT = re.compile(
    r"_(?:v\d+(?:_\d+)*|w\d+|\d+x\d+|tz_[a-z_]+?|\d+(?:s|min)|attempt\d*|late_attempt|later"
    r"|dead|first_start)(?=_|$)")
_SESSION_MARK = re.compile(r"\((?:old|new) set\)")


@dataclass(frozen=True, slots=True)
class Member:
    """One fixture as grouping sees it: its path under the tree (without `heldout/`)."""

    rel: str                      # e.g. "reported/claude/rate_limit__x" (no suffix)
    state: str
    keys: tuple[str, ...]         # the group keys it names; fixtures sharing one are a group


def scene(stem: str) -> str:
    """The scene slug of a fixture name: `<state>__<slug>` without the variant tokens."""
    slug = stem.split("__", 1)[-1]
    prev = None
    while prev != slug:
        prev, slug = slug, _VARIANT.sub("", slug)
    return slug


def keys(rel: str, meta: Mapping[str, object]) -> tuple[str, ...]:
    """The group keys of one fixture (see the module docstring)."""
    provider = str(meta.get("provider", rel.split("/")[-2]))
    stem = rel.rsplit("/", 1)[-1]
    source = str(meta.get("source", ""))
    out: list[str] = []
    url = source.split()[0] if source.startswith("http") else ""
    if url:
        out.append("report:" + re.split(r"[#?]", url)[0].rstrip("/"))
    else:
        slug = scene(stem)
        out.append(f"{provider}:{slug}")
        if _SESSION_MARK.search(source):
            out.append(f"{provider}:session:first_start")
        if slug.startswith("turns_"):
            out.append(f"{provider}:session:turns")
    if "group" in meta:
        out.append(f"explicit:{meta['group']}")
    return tuple(out)


def folder(rel: str) -> str:
    return rel.rsplit("/", 1)[0]


def grouped(members: Iterable[Member]) -> dict[str, list[Member]]:
    """Members by group, named by the group's smallest key; union over shared keys."""
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        while parent.setdefault(k, k) != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    listed = list(members)
    for m in listed:
        for k in m.keys[1:]:
            a, b = find(m.keys[0]), find(k)
            if a != b:
                parent[max(a, b)] = min(a, b)
    out: dict[str, list[Member]] = defaultdict(list)
    for m in listed:
        out[find(m.keys[0])].append(m)
    return dict(out)


class Labelled(Protocol):
    @property
    def state(self) -> str: ...


def main_state(group: Iterable[Labelled]) -> str:
    """The label most of a group's screens carry (ties: the first by name)."""
    counts = Counter(m.state for m in group)
    return min(counts, key=lambda s: (-counts[s], s))


def held_out(groups: Mapping[str, list[Member]], seed: int,
             share: float = HELDOUT_SHARE) -> set[str]:
    """The names of the groups to hold out: ~`share` of every folder, stratified by label."""
    by_folder: dict[str, list[str]] = defaultdict(list)
    for name, group in groups.items():
        by_folder[folder(group[0].rel)].append(name)
    out: set[str] = set()
    for fold, names in sorted(by_folder.items()):
        rng = random.Random(f"{seed}/{fold}")
        names = sorted(names)
        rng.shuffle(names)
        names.sort(key=lambda n: main_state(groups[n]))          # stable: shuffled per label
        offset = rng.random()
        for i, name in enumerate(names):
            if int((i + 1) * share + offset) > int(i * share + offset):
                out.add(name)
    by_state: dict[str, list[str]] = defaultdict(list)
    for name in sorted(groups):
        by_state[main_state(groups[name])].append(name)
    for state, names in sorted(by_state.items()):
        if len(names) >= 2 and not out.intersection(names):
            out.add(random.Random(f"{seed}/{state}").choice(names))
    return out
