"""What an agent process says about which session file is its own (issue 21 item 1): the
files it holds open, its argv (a session id passed at launch, `--resume <id>`), and how many
other live processes of the same CLI run in its directory (then "the newest session file
there" is a guess). Read with psutil; `adapters.sessions.attribute` weighs them.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass

import psutil

from pitcrew.supervisor.adapters.processes import ProcInfo, matches
from pitcrew.supervisor.providers.model import ProcessMatch


@dataclass(frozen=True, slots=True)
class OwnFacts:
    """What the agent process itself says about which session is its own: the files it
    holds open, its argv (a session id passed at launch, `--resume <id>`), and how many
    other live processes of the same CLI run in the same directory."""

    pid: int | None = None
    open_files: frozenset[str] = frozenset()
    argv: tuple[str, ...] = ()
    peers: int = 0


FACTS_TTL = 1.0   # seconds an OwnFacts reading is reused (it walks every process: ~20 ms)
_facts_cache: dict[tuple[int, tuple[str, ...], str], tuple[float, OwnFacts]] = {}


def own_facts(pid: int | None, rule: ProcessMatch, cwd: str) -> OwnFacts:
    """`OwnFacts` of `pid` (what can still be read: a gone process has only its pid)."""
    if pid is None:
        return OwnFacts()
    key = (pid, rule.names, cwd)
    now = time.monotonic()
    cached = _facts_cache.get(key)
    if cached is not None and now - cached[0] < FACTS_TTL:
        return cached[1]
    if len(_facts_cache) > 512:
        _facts_cache.clear()
    facts = _own_facts(pid, rule, cwd)
    _facts_cache[key] = (now, facts)
    return facts


def _own_facts(pid: int, rule: ProcessMatch, cwd: str) -> OwnFacts:
    opened: frozenset[str] = frozenset()
    argv: tuple[str, ...] = ()
    kin = {pid}    # its own wrappers and children are not other agents
    with contextlib.suppress(psutil.Error, OSError):
        proc = psutil.Process(pid)
        argv = tuple(proc.cmdline())
        kin |= {p.pid for p in (*proc.parents(), *proc.children(recursive=True))}
        opened = frozenset(f.path for f in proc.open_files())
    peers = 0
    for proc in psutil.process_iter(["name", "cmdline"]):
        name, cmdline = proc.info.get("name") or "", tuple(proc.info.get("cmdline") or ())
        if proc.pid in kin or not matches(ProcInfo(proc.pid, 0, name, "", cmdline, "", 0.0, 0),
                                          rule):
            continue
        with contextlib.suppress(psutil.Error, OSError):
            there = proc.cwd()
            if there == cwd or os.path.realpath(there) == os.path.realpath(cwd):
                peers += 1
    return OwnFacts(pid, opened, argv, peers)
