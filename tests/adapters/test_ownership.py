"""What a real process says about its own session: argv, open files, other agents of the same
CLI in its directory (real processes, no mocks)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pitcrew.supervisor.adapters import ownership
from pitcrew.supervisor.providers.model import ProcessMatch
from tests.support.waiting import wait_until


def test_peers_in_the_same_folder_its_argv_and_its_open_files(tmp_path: Path) -> None:
    held = tmp_path / "session.jsonl"
    held.write_text("{}\n")
    script = f"import time; f = open({str(held)!r}); time.sleep(30)"
    other = tmp_path / "elsewhere"
    other.mkdir()
    procs = [subprocess.Popen(["python3", "-c", script, "--resume", "abc"], cwd=cwd)
             for cwd in (tmp_path, tmp_path, other)]
    try:
        rule = ProcessMatch(("python3",))
        # python's start takes a while on a loaded machine: wait until the file is open
        facts = wait_until(lambda: (f := ownership._own_facts(procs[0].pid, rule, str(tmp_path)))
                           and str(held) in f.open_files and f, timeout=20,
                           message=f"{held} opened by pid {procs[0].pid}")
        assert facts.peers == 1                     # the one in `elsewhere` is not a peer
        assert facts.argv[-2:] == ("--resume", "abc")
        assert str(held) in facts.open_files
        gone = ownership.own_facts(None, rule, str(tmp_path))
        assert gone == ownership.OwnFacts()
    finally:
        for p in procs:
            p.kill()
            p.wait()
