"""Wake-ups as APScheduler jobs: the `Scheduler` port of the service layer.

A job only posts an event to the loop's queue at a wall-clock time; the loop does the work on
its own thread. Jobs with a key replace each other (one pending wake per terminal, one retry
per delivery), and a job whose time passed while the machine slept still runs (no misfire
grace limit), once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from apscheduler.schedulers.base import BaseScheduler


class JobScheduler:
    def __init__(self, scheduler: BaseScheduler, post: Callable[[object], None]) -> None:
        self.scheduler = scheduler
        self.post = post

    def at(self, when: float, event: object, key: str | None = None) -> None:
        self.scheduler.add_job(
            self.post, "date", run_date=dt.datetime.fromtimestamp(when, dt.UTC), args=[event],
            id=key, replace_existing=key is not None, misfire_grace_time=None)
