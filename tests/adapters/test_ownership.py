"""What a real process says about its own session: argv, open files, other agents of the same
CLI in its directory (real processes, no mocks)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pitcrew.supervisor.adapters import ownership
from pitcrew.supervisor.providers.model import ProcessMatch


def test_peers_in_the_same_folder_its_argv_and_its_open_files(tmp_path: Path) -> None:
    held = tmp_path / "session.jsonl"
    held.write_text("{}\n")
    script = f"import time; f = open({str(held)!r}); time.sleep(30)"
    other = tmp_path / "elsewhere"
    other.mkdir()
    procs = [subprocess.Popen(["python3", "-c", script, "--resume", "abc"], cwd=cwd)
             for cwd in (tmp_path, tmp_path, other)]
    try:
        import time
        time.sleep(0.5)                             # the file is opened
        rule = ProcessMatch(("python3",))
        facts = ownership._own_facts(procs[0].pid, rule, str(tmp_path))
        assert facts.peers == 1                     # the one in `elsewhere` is not a peer
        assert facts.argv[-2:] == ("--resume", "abc")
        assert str(held) in facts.open_files
        gone = ownership.own_facts(None, rule, str(tmp_path))
        assert gone == ownership.OwnFacts()
    finally:
        for p in procs:
            p.kill()
            p.wait()
