"""How long the local classifier takes on screens of different sizes.

Prints figures and ratios against a baseline measured in the same run (one regex search over
the same text), so the numbers mean the same on a slow and a fast machine:

    .venv/bin/python bench/classify_speed.py
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pitcrew.supervisor.core.classifier import classify
from tests.support.screens import all_fixtures, rules_for

NOW = dt.datetime(2026, 11, 30, 14, tzinfo=dt.UTC)


def measure(text: str, rules: object, number: int) -> tuple[float, float]:
    baseline_rx = re.compile("usage limit reached", re.I)
    t_classify = timeit.timeit(lambda: classify(text, rules, NOW, dt.UTC), number=number) / number
    t_base = timeit.timeit(lambda: baseline_rx.search(text), number=number) / number
    return t_classify, t_base


def main() -> int:
    rules = rules_for("claude")
    typical = next((f.text for f in all_fixtures() if f.provider == "claude"), "> \n" * 40)
    cases = {
        "typical 40-line screen": typical,
        "5,000-line scrollback": "\n".join(f"line {i} 429 too many requests" for i in range(5000))
        + "\n" + typical,
        "one 1 MB line": "x" * 1_000_000,
        "5,000 lines of box drawing": "│ " * 60 + "\n" * 5000,
    }
    print(f"{'case':30} {'classify':>12} {'1 regex':>12} {'ratio':>8}")
    for name, text in cases.items():
        c, b = measure(text, rules, 50)
        print(f"{name:30} {c * 1e6:10.0f}µs {b * 1e6:10.0f}µs {c / max(b, 1e-9):8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
