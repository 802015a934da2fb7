"""The supervisor host's Qt plumbing: signals across threads, and the Qt scheduler."""

from __future__ import annotations

import datetime as dt
import sys
import threading

from PySide6.QtCore import QObject, QThread, Signal

from pitcrew.desktop.host import GuiScheduler


class Emitter(QObject):
    view = Signal(object)


def test_thousands_of_emits_from_a_thread_keep_the_interpreter_alive(qtbot) -> None:
    """PySide6 6.12.0 lost a reference to emit()'s bool result on every call: the
    supervisor publishes views all day, so the app aborted after a few thousand."""
    got: list[object] = []
    emitter = Emitter()
    emitter.view.connect(got.append)
    before = sys.getrefcount(True), sys.getrefcount(False)

    def publish() -> None:
        for i in range(5000):
            emitter.view.emit(i)

    thread = threading.Thread(target=publish)
    thread.start()
    qtbot.waitUntil(lambda: len(got) == 5000, timeout=20000)
    thread.join()
    for i in range(5000):
        emitter.view.emit(i)
    assert abs(sys.getrefcount(True) - before[0]) < 100
    assert abs(sys.getrefcount(False) - before[1]) < 100


def test_a_job_added_from_the_supervisors_thread_runs(qtbot) -> None:
    scheduler = GuiScheduler()
    ran: list[QThread] = []
    scheduler.start()
    try:
        def add() -> None:
            scheduler.add_job(lambda: ran.append(QThread.currentThread()), "date",
                              run_date=dt.datetime.now(dt.UTC) + dt.timedelta(seconds=0.2))

        worker = threading.Thread(target=add)
        worker.start()
        worker.join()
        qtbot.waitUntil(lambda: bool(ran), timeout=10000)
    finally:
        scheduler.shutdown(wait=False)
    assert len(ran) == 1
