"""How well the classifier reads a set of screen fixtures: accuracy, per-state precision and
recall, a confusion matrix, the calm screens it called a stoppage and the crashed screens it
called calm (both must be none)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pitcrew.supervisor.core.screen import BLOCKING_PRIORITY, Classification, ScreenState
from tests.support.screens import Fixture, run

CALM = frozenset({"busy", "idle", "question", "picker", "draft"})   # the agent is fine
# states that stop an agent (a live agent called one of them gets restarted or resumed)
STOPPAGES = frozenset(s.value for s in BLOCKING_PRIORITY) - CALM | {"exited"}
STATES = tuple(s.value for s in ScreenState)


@dataclass
class Score:
    results: list[tuple[Fixture, Classification]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def correct(self) -> int:
        return sum(got.state.value == fx.state for fx, got in self.results)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 1.0

    def wrong(self) -> list[tuple[Fixture, Classification]]:
        return [(fx, got) for fx, got in self.results if got.state.value != fx.state]

    def calm_called_stoppage(self) -> list[tuple[Fixture, Classification]]:
        return [(fx, got) for fx, got in self.results
                if fx.state in CALM and got.state.value in STOPPAGES]

    def crashed_called_calm(self) -> list[tuple[Fixture, Classification]]:
        return [(fx, got) for fx, got in self.results
                if fx.state == "crashed" and got.state.value in CALM]

    def confusion(self) -> Counter[tuple[str, str]]:
        return Counter((fx.state, got.state.value) for fx, got in self.results)

    def recall(self) -> dict[str, float]:
        want = Counter(fx.state for fx, _ in self.results)
        hit = Counter(fx.state for fx, got in self.results if got.state.value == fx.state)
        return {s: hit[s] / want[s] for s in STATES if want[s]}

    def precision(self) -> dict[str, float]:
        said = Counter(got.state.value for _, got in self.results)
        hit = Counter(fx.state for fx, got in self.results if got.state.value == fx.state)
        return {s: hit[s] / said[s] for s in STATES if said[s]}

    def by(self, key: Callable[[Fixture], str]) -> dict[str, Score]:
        out: dict[str, Score] = {}
        for fx, got in self.results:
            out.setdefault(key(fx), Score()).results.append((fx, got))
        return dict(sorted(out.items()))


def score(fixtures: Iterable[Fixture],
          runner: Callable[[Fixture], Classification] = run) -> Score:
    return Score([(fx, runner(fx)) for fx in fixtures])
