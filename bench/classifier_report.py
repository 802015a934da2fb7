"""How the local classifier does on every screen fixture: a confusion list for tuning.

    .venv/bin/python bench/classifier_report.py [PROVIDER ...]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.screens import all_fixtures, run


def main(argv: list[str]) -> int:
    wanted = set(argv)
    total = good = 0
    by_provider: Counter[str] = Counter()
    bad_provider: Counter[str] = Counter()
    for fx in all_fixtures():
        if wanted and fx.provider not in wanted:
            continue
        got = run(fx)
        total += 1
        by_provider[fx.provider] += 1
        problems = []
        if got.state.value != fx.state:
            problems.append(f"state {got.state.value} != {fx.state}")
        if fx.reset_at and got.reset_at != fx.reset_at:
            problems.append(f"reset_at {got.reset_at} != {fx.reset_at}")
        if fx.retry_after is not None and got.retry_after != fx.retry_after:
            problems.append(f"retry_after {got.retry_after} != {fx.retry_after}")
        wanted_evidence = fx.evidence if fx.state != "unknown" else None
        if wanted_evidence and wanted_evidence.lower() not in got.evidence.lower():
            problems.append(f"evidence {got.evidence!r} lacks {wanted_evidence!r}")
        if problems:
            bad_provider[fx.provider] += 1
            print(f"{fx.id}: {'; '.join(problems)}  [evidence: {got.evidence[:90]!r}]")
        else:
            good += 1
    print(f"\n{good}/{total} fixtures classified as labelled")
    for name, count in sorted(by_provider.items()):
        print(f"  {name:12} {count - bad_provider[name]:4}/{count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
