"""Disk trouble: the data folder refuses writes (full: ENOSPC; read-only: EROFS) while an
agent crashes mid-task. Pitcrew keeps watching, says once per file what it cannot record,
acts on nothing it could not write down first, and catches up — exactly once — when the disk
takes writes again. The fault is injected into the real watcher's ledger and state.json
writes (inject/sitecustomize.py): a tiny tmpfs would need root, and root ignores read-only
permission bits.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from pitcrew.supervisor.core.records import Badge, Decision
from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from pitcrew.supervisor.store.ledger import Ledger
from tests.faults.harness import badges, prompts, rows, start_agent, wait_badges, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until


@pytest.mark.e2e
@pytest.mark.parametrize("fault", ["ENOSPC", "EROFS"])
def test_a_disk_that_refuses_writes_holds_every_action_then_catches_up_once(
    tmux: TmuxServer, home: Path, tmp_path: Path, fault: str
) -> None:
    pane = start_agent(tmux, tmp_path)
    disk = tmp_path / "disk-fault"
    disk.write_text("")
    w = watch(tmux, {"disk_file": str(disk)})
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash 3 1")
        w.wait_for(f"{pane}: busy")
        disk.write_text(fault)
        w.wait_for("exited (status 3")
        time.sleep(2.0)                       # four times the 0.5 s wait before a restart
        assert tmux.pane(pane).dead, "nothing was resumed while nothing could be recorded"
        assert not w.saw("respawned") and badges(home, scheduled=True) == []
        assert w.proc.poll() is None, "still watching"
        healed = time.time()
        disk.write_text("")
        got = wait_badges(home, "Resumed", "Continued", timeout=30)
        wait_until(lambda: CONTINUE_MESSAGE in prompts(tmux), 20,
                   message=lambda: str(prompts(tmux)))
        time.sleep(1.0)
    finally:
        assert w.stop() == 0
    said = [line for line in w.lines if "cannot record to" in line]
    assert len(said) == 1, "said once"
    assert os.strerror(getattr(errno, fault)) in said[0]
    assert "acts on nothing until it can write there again" in said[0]
    assert w.saw("can write again; catching up")
    assert sum("cannot write the ledger" in line for line in w.lines) <= 1
    assert badges(home, scheduled=True) == ["Scheduled", "Resumed", "Continued"]
    assert rows(home)[0].at >= healed - 0.5, "the wait started once it could be recorded"
    assert got[0].attempt == 1
    assert prompts(tmux) == ["crash 3 1", CONTINUE_MESSAGE], "nothing typed twice"


def _row(n: int) -> Decision:
    return Decision(Badge.SKIPPED, 1000.0 + n, "s:%1", "Fake Agent", f"task {n}", "/p", "t",
                    f"row {n}", 0, {})


def test_ledger_rows_the_disk_refuses_wait_in_memory_and_are_written_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The store's side of it: a full disk fails a write part-way (a torn line); the rows wait
    in memory, said once, and are written whole, in order, when the disk has room again."""
    ledger = Ledger(tmp_path / "autopilot-ledger.jsonl")
    ledger.append(_row(0))
    real_write = os.write
    full = [True]

    def write(fd: int, data: bytes) -> int:
        if full[0]:
            real_write(fd, bytes(data[:7]))          # part of the line made it to disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    with caplog.at_level("INFO"):
        for n in (1, 2, 3):
            ledger.append(_row(n))                      # never raises
        assert ledger.failing and not ledger.flush()
        full[0] = False
        assert ledger.flush() and not ledger.failing
    assert [r.reason for r in reversed(ledger.tail(10))] == ["row 0", "row 1", "row 2", "row 3"]
    errors = [r for r in caplog.records if "cannot write the ledger" in r.getMessage()]
    assert len(errors) == 1 and "No space left on device" in errors[0].getMessage()
    assert "caught up" in caplog.text
