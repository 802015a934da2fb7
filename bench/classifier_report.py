"""How the local classifier reads the screen fixtures, per split (tuning / held-out):
accuracy (overall, per provider, per origin), per-state precision and recall, a confusion
matrix, and the calm screens (idle or busy) it called a stoppage (must be 0).

    .venv/bin/python bench/classifier_report.py [--split tuning|heldout] [--wrong] [PROVIDER ...]

`--wrong` lists the misread screens; do not use it on the held-out split to tune rules
(tests/fixtures/screens/split.py explains why that split exists).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.accuracy import STATES, Score, score
from tests.support.screens import all_fixtures


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def report(name: str, sc: Score, wrong: bool) -> None:
    print(f"\n=== {name}: {sc.correct}/{sc.total} = {_pct(sc.accuracy)}")
    for label, part in (("provider", sc.by(lambda f: f.provider)),
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
    if wrong:
        for fx, got in sc.wrong():
            print(f"  MISREAD {fx.id}: {fx.state} -> {got.state.value}  [{got.evidence[:90]!r}]")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=("tuning", "heldout"))
    parser.add_argument("--wrong", action="store_true", help="list misread screens")
    parser.add_argument("providers", nargs="*")
    args = parser.parse_args(argv)
    fixtures = [f for f in all_fixtures()
                if not args.providers or f.provider in args.providers]
    for split in ("tuning", "heldout"):
        if args.split in (None, split):
            report(split, score(f for f in fixtures if f.split == split), args.wrong)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
