"""How the local classifier reads the screen fixtures, per split (tuning / held-out, whole
source groups: tests/fixtures/screens/split.py): accuracy (overall, per CLI, per origin),
per-state precision and recall, recall per state for each CLI, a confusion matrix, the calm
screens (busy, idle, question, picker, draft) it called a stoppage and the crashed screens it
called calm (both must be 0).

    .venv/bin/python bench/classifier_report.py [--split tuning|heldout] [--wrong] [--before]
                                                [PROVIDER ...]

`--before` reads the same screens with the classifier and provider files as they were before
issue #12 (commit 04979e3, from git), for a before/after comparison.

`--wrong` lists the misread screens; do not use it on the held-out split to tune rules
(tests/fixtures/screens/split.py explains why that split exists).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pitcrew.supervisor.core.screen import Classification
from pitcrew.supervisor.providers.loader import load_registry
from tests.support.accuracy import STATES, Score, score
from tests.support.screens import FAKE_AGENT_DIR, Fixture, all_fixtures, groups

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "04979e3"


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=True).stdout


def before_runner() -> Callable[[Fixture], Classification]:
    """The pre-#12 classifier with the pre-#12 provider files, as a fixture runner."""
    module = types.ModuleType("classifier_before_12")
    sys.modules[module.__name__] = module
    exec(compile(_git("show", f"{BASELINE}:supervisor/core/classifier.py"),
                 f"{BASELINE}:classifier.py", "exec"), module.__dict__)
    folder = Path(tempfile.mkdtemp(prefix="pitcrew-providers-before-12-"))
    for name in _git("ls-tree", "--name-only", f"{BASELINE}:resources/providers").split():
        if name.endswith(".toml"):
            (folder / name).write_text(_git("show", f"{BASELINE}:resources/providers/{name}"))
    registry = load_registry(folder, FAKE_AGENT_DIR)

    def run(fx: Fixture) -> Classification:
        provider = registry.get(fx.provider)
        rules = provider.screen if provider else registry.generic_screen
        got: Classification = module.classify(fx.text, rules, fx.captured_at,
                                              ZoneInfo(fx.timezone))
        return got

    return run


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def report(name: str, sc: Score, wrong: bool) -> None:
    n_groups = len(groups([fx for fx, _ in sc.results]))
    print(f"\n=== {name}: {sc.correct}/{sc.total} = {_pct(sc.accuracy)}"
          f"  ({n_groups} source groups)")
    for label, part in (("CLI", sc.by(lambda f: f.provider)),
                        ("origin", sc.by(lambda f: f.origin))):
        print(f"  by {label}: " + "  ".join(
            f"{k} {v.correct}/{v.total}" for k, v in part.items()))
    rec, prec = sc.recall(), sc.precision()
    print(f"  {'state':16} {'n':>4} {'recall':>7} {'precision':>9}")
    for s in STATES:
        n = sum(1 for fx, _ in sc.results if fx.state == s)
        if n or s in prec:
            r = _pct(rec[s]) if s in rec else "    -"
            p = _pct(prec[s]) if s in prec else "    -"
            print(f"  {s:16} {n:4} {r:>7} {p:>9}")
    print("  recall by CLI (right/screens per label)")
    for cli, part in sc.by(lambda f: f.provider).items():
        print(f"    {cli:9} " + "  ".join(f"{s} {v.correct}/{v.total}"
                                         for s, v in part.by(lambda f: f.state).items()))
    conf = sc.confusion()
    used = [s for s in STATES if any(s in k for k in conf)]
    short = {s: s[:5] for s in used}
    print("  confusion (rows: label, columns: classified)")
    print("  " + " " * 16 + "".join(f"{short[s]:>6}" for s in used))
    for row in used:
        if not any(conf[(row, c)] for c in used):
            continue
        print(f"  {row:16}" + "".join(
            f"{conf[(row, c)] or '.':>6}" for c in used))
    calm = sc.calm_called_stoppage()
    print(f"  calm screens called a stoppage: {len(calm)}")
    for fx, got in calm:
        print(f"    {fx.id}: {fx.state} -> {got.state.value}  [{got.evidence[:80]!r}]")
    crashed = sc.crashed_called_calm()
    print(f"  crashed screens called calm: {len(crashed)}")
    for fx, got in crashed:
        print(f"    {fx.id}: {fx.state} -> {got.state.value}  [{got.evidence[:80]!r}]")
    if wrong:
        for fx, got in sc.wrong():
            print(f"  MISREAD {fx.id}: {fx.state} -> {got.state.value}  [{got.evidence[:90]!r}]")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=("tuning", "heldout"))
    parser.add_argument("--wrong", action="store_true", help="list misread screens")
    parser.add_argument("--before", action="store_true",
                        help=f"use the classifier and provider files of {BASELINE}")
    parser.add_argument("providers", nargs="*")
    args = parser.parse_args(argv)
    fixtures = [f for f in all_fixtures()
                if not args.providers or f.provider in args.providers]
    runner = before_runner() if args.before else None
    for split in ("tuning", "heldout"):
        if args.split in (None, split):
            part = [f for f in fixtures if f.split == split]
            sc = score(part, runner) if runner else score(part)
            report(split + (f" (classifier of {BASELINE})" if runner else ""), sc, args.wrong)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
