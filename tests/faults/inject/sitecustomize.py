"""Fault injection for the real `pitcrew watch` process (test-only; never shipped).

The fault tests start the watcher with this folder on PYTHONPATH, so Python imports this file
at start-up. It does nothing unless `PITCREW_FAULTS` names a JSON file; it then drops that
variable (and PYTHONPATH) from the environment, so no child — a checker, a respawned agent —
inherits it, and wraps a few seams of the running app:

* `kill_at` / `kill_nth`: SIGKILL the watcher itself right after the n-th time a step of an
  incident happened (see STEPS) — a crash at an exact point, no polling, no luck.
  `checker_log`: the fake checkers' run log; `checker_running` waits for a run in it.
* `clock_file`: a file holding seconds to add to the wall clock (re-read as it changes): a
  laptop that slept. The scheduler sees the same clock and is woken when it jumps, as a real
  scheduler would find its jobs overdue after a resume.
* `disk_file`: while this file holds an errno name (`ENOSPC`, `EROFS`), every write of the
  ledger and of state.json fails with it, as on a full or read-only disk.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import threading
import time
from typing import Any


def _install(config: dict[str, Any]) -> None:
    from pitcrew.supervisor.adapters import checker_cli, clock
    from pitcrew.supervisor.service import effects, loop, observing, relaunching
    from pitcrew.supervisor.store import ledger, state_store

    counts: dict[str, int] = {}

    def step(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1
        if name == config.get("kill_at") and counts[name] == int(config.get("kill_nth", 1)):
            print(f"faults: SIGKILL at {name} #{counts[name]}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    def after(cls: Any, method: str, name: Any) -> None:
        original = getattr(cls, method)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            label = name(*args, **kwargs) if callable(name) else name
            if label:
                step(label)
            return result

        setattr(cls, method, wrapped)

    def before(cls: Any, method: str, name: Any) -> None:
        original = getattr(cls, method)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            label = name(*args, **kwargs) if callable(name) else name
            if label:
                step(label)
            return original(*args, **kwargs)

        setattr(cls, method, wrapped)

    def waiting(self: Any, key: str) -> str:
        w = self.watched.get(key)
        inc = w.state.incident if w is not None else None
        return "wait_over" if inc is not None and inc.phase.value == "waiting" else ""

    # STEPS of an incident, in order
    after(observing.Observer, "exited", "exit_seen")               # decided, wait scheduled
    before(loop.Supervisor, "wake", waiting)                       # a wait ended, not acted
    after(relaunching.Relauncher, "relaunch", "resume_started")    # not confirmed yet
    after(effects.Effects, "type_line",                            # text typed, no Enter yet
          lambda self, w, text, what: {"continue": "continue_typed",
                                       "the resume command": "resume_typed"}.get(
                                           what, "message_typed" if "queued" in what else ""))
    original_run = checker_cli._run

    def checker_started() -> None:
        """`checker_running` once the checker logged its start (a fixed delay was too short
        for a loaded machine: the watcher died before the checker had even begun)."""
        log, deadline = config.get("checker_log"), time.monotonic() + 20
        while log and time.monotonic() < deadline:
            with contextlib.suppress(OSError), open(log, encoding="utf-8") as fh:
                if '"child_pid"' in fh.read():
                    break
            time.sleep(0.05)
        time.sleep(0.3)
        step("checker_running")

    def run(argv: Any, env: Any, cwd: Any, stdin: Any, timeout: Any, name: Any) -> Any:
        threading.Thread(target=checker_started, daemon=True).start()
        return original_run(argv, env, cwd, stdin, timeout, name)

    checker_cli._run = run

    if config.get("clock_file"):
        _clock(config["clock_file"], clock, loop)
    if config.get("disk_file"):
        _disk(config["disk_file"], ledger, state_store)


def _read_float(path: str) -> float:
    try:
        with open(path, encoding="utf-8") as fh:
            return float(fh.read().strip() or 0)
    except (OSError, ValueError):
        return 0.0


def _clock(path: str, clock: Any, loop: Any) -> None:
    import datetime as dt

    from apscheduler.schedulers import base

    real_time = time.time
    offset = [0.0]
    schedulers: list[Any] = []

    def jumped() -> float:
        return real_time() + offset[0]

    class Datetime(dt.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:   # type: ignore[override]
            return dt.datetime.fromtimestamp(jumped(), tz)

    time.time = jumped
    base.datetime = Datetime          # APScheduler's idea of "now"
    clock.now_utc = lambda: dt.datetime.fromtimestamp(jumped(), dt.UTC)
    original_init = base.BaseScheduler.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        schedulers.append(self)

    base.BaseScheduler.__init__ = init

    def watch() -> None:
        while True:
            value = _read_float(path)
            if value != offset[0]:
                offset[0] = value
                print(f"faults: wall clock offset {value:+.0f} s", flush=True)
                for s in schedulers:
                    with contextlib.suppress(Exception):
                        s.wakeup()   # as after a resume: overdue jobs run now
            time.sleep(0.05)

    threading.Thread(target=watch, daemon=True).start()


def _disk(path: str, ledger: Any, state_store: Any) -> None:
    def fault() -> None:
        try:
            with open(path, encoding="utf-8") as fh:
                name = fh.read().strip()
        except OSError:
            return
        if name:
            code = getattr(errno, name)
            raise OSError(code, os.strerror(code))

    original_write = ledger.Ledger._write
    original_save = state_store.save

    def write(self: Any, data: bytes) -> None:
        fault()
        original_write(self, data)

    def save(target: Any, snapshot: Any) -> None:
        fault()
        original_save(target, snapshot)

    ledger.Ledger._write = write
    state_store.save = save


_CONFIG = os.environ.pop("PITCREW_FAULTS", "")
if _CONFIG:
    os.environ.pop("PYTHONPATH", None)
    with open(_CONFIG, encoding="utf-8") as _fh:
        _install(json.load(_fh))
