"""How long the local classifier takes on screens of different sizes, against the classifier
before issue #12 (commit 04979e3, loaded from git) in the same run — so the ratio means the
same on a slow and a fast machine:

    .venv/bin/python bench/classify_speed.py [--number N]

Each figure is the best of 5 rounds of N calls (a shared machine adds noise, never speed).
Targets (issue #12): a typical 40-line screen in <= 0.5 ms on the build machine, where the old
code took about 2.6 ms (so a ratio of about 5x); a 5,000-line scrollback in <= 1 ms.
"""

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
import timeit
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pitcrew.supervisor.core.classifier import classify  # noqa: E402
from tests.support.screens import all_fixtures, rules_for  # noqa: E402

NOW = dt.datetime(2026, 11, 30, 14, tzinfo=dt.UTC)
BASELINE = "04979e3"


def old_classify() -> Callable[..., object] | None:
    """The classifier as it was before issue #12, or None outside a git checkout."""
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{BASELINE}:supervisor/core/classifier.py"],
            capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("classifier_before_12")
    sys.modules[module.__name__] = module
    exec(compile(source, f"{BASELINE}:classifier.py", "exec"), module.__dict__)
    fn: Callable[..., object] = module.classify
    return fn


def best(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--number", type=int, default=100)
    args = ap.parse_args()
    rules = rules_for("claude")
    typical = [f.text for f in all_fixtures() if f.provider == "claude"
               and 30 <= len(f.text.splitlines()) <= 50][:8] or ["> \n" * 40]
    cases = {
        "typical 40-line screen": typical,
        "5,000-line scrollback": ["\n".join(f"line {i} 429 too many requests"
                                            for i in range(5000)) + "\n" + typical[0]],
        "one 1 MB line": ["x" * 1_000_000],
        "5,000 lines of box drawing": ["│ " * 60 + "\n" * 5000],
    }
    before = old_classify()
    print(f"{'case':28} {'now':>10} {'before':>10} {'faster':>8}")
    for name, texts in cases.items():
        new = best(lambda ts=texts: [classify(t, rules, NOW, dt.UTC) for t in ts], args.number)
        new /= len(texts)
        if before is not None:
            old = best(lambda ts=texts, fn=before: [fn(t, rules, NOW, dt.UTC) for t in ts],
                       args.number)
            old /= len(texts)
            print(f"{name:28} {new * 1e6:8.0f}µs {old * 1e6:8.0f}µs {old / new:7.1f}x")
        else:
            print(f"{name:28} {new * 1e6:8.0f}µs {'-':>10} {'-':>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
