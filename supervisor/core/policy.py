"""Autopilot's numbers, as values (SPEC §4; seeds 000, 001, 003).

Every delay Autopilot waits is computed here from a frozen `RestartPolicy`, the attempt or
renewal count, and — for jitter only — a seeded `Random` the caller passes in. Nothing
here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from random import Random


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    backoff: tuple[float, ...] = (5.0, 20.0, 60.0)   # before restart 1, 2, 3 of one incident
    max_attempts: int = 3                            # then: Stopped retrying … waiting on you
    hourly_cap: int = 6                              # continues/resumes per terminal per hour
    hour: float = 3600.0
    crash_loop_count: int = 3                        # 3 crashes within …
    crash_loop_window: float = 120.0                 # … 120 s →
    crash_loop_cooldown: float = 120.0               # … a 120 s cooldown
    rate_limit_cooldown: float = 300.0               # no reset time known: cool down 300 s
    rate_limit_renewals: int = 4                     # renewals decay; after 4, restart anyway
    rate_limit_retry: float = 60.0                   # a 429 without retry-after: 60 s
    server_error_wait: float = 30.0                  # 500/502/503/529/overloaded: 30 s
    reset_margin: float = 60.0                       # after a parsed reset time (ours) …
    reset_jitter: float = 120.0                      # … plus up to this much, spread at random
    confirm_timeout: float = 45.0                    # a relaunched agent must show up by then
    confirm_settle: float = 2.0                      # … and still run this long after (ours)
    quiet_after: float = 180.0                       # default "task went quiet" threshold
    time_scale: float = 1.0                          # test-only: scales every wait above

    def scaled(self, seconds: float) -> float:
        return seconds * self.time_scale


DEFAULT_POLICY = RestartPolicy()


def backoff(policy: RestartPolicy, attempt: int) -> float:
    """Seconds to wait before restart number `attempt` (1-based) of one incident."""
    steps = policy.backoff
    return policy.scaled(steps[min(max(attempt, 1), len(steps)) - 1])


def rate_limit_cooldown(policy: RestartPolicy, renewal: int) -> float:
    """Cooldown length for a limit with no known reset: 300 s, then decaying renewals.

    Renewal n (1-based) lasts 300 / (n + 1) s — 150, 100, 75, 60 — so an agent that keeps
    hitting the limit is retried sooner each time, and after `rate_limit_renewals` renewals it
    is restarted anyway (seed 001: breaks the wait → retry → limited loop).
    """
    return policy.scaled(policy.rate_limit_cooldown / (renewal + 1))


def reset_wait(policy: RestartPolicy, seconds_to_reset: float, rng: Random) -> float:
    """Wait until a parsed reset time, plus a margin and jitter so agents don't all wake at once."""
    margin = policy.reset_margin + rng.uniform(0.0, policy.reset_jitter)
    return max(0.0, seconds_to_reset) + policy.scaled(margin)
