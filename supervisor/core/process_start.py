"""Whether two readings of a process's start time name the same process.

A start time is read as the boot time plus the ticks since boot. The boot time is the kernel's
`btime`, in whole seconds, derived from the wall clock: when the clock is stepped (NTP on a
freshly booted machine, a laptop that wakes up) it moves, and every process's start time with
it; `ps lstart` (a remote host's listing) has a resolution of 1 s besides. Read by two `ps`
calls, or by two Pitcrew processes, one agent's start time can differ by a second. A pid is
used again only after the whole pid space has wrapped, so two processes with one pid that
started within a few seconds of each other do not occur: a reading within that much is the
same process, one beyond it is another.

Pure: no I/O.
"""

from __future__ import annotations

SAME_WITHIN = 3.0   # seconds


def same_start(a: float, b: float) -> bool:
    """Whether start times `a` and `b` (epoch seconds) of one pid belong to one process."""
    return abs(a - b) < SAME_WITHIN


def same_process(pid_a: int | None, started_a: float, pid_b: int, started_b: float) -> bool:
    """Whether two readings (pid and start time) are one process. The tolerance holds only
    for one pid: two agents started a second apart are two processes. A reading recorded
    without its pid (a state file from before pids were kept) must match to the tick."""
    if pid_a is None:
        return abs(started_a - started_b) < 0.01
    return pid_a == pid_b and same_start(started_a, started_b)
