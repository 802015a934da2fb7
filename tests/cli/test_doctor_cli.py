"""`pitcrew doctor` says where Pitcrew's files are, the log file included (the README's
Troubleshooting sends people to it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.test_cli import pitcrew


def test_doctor_prints_where_the_log_file_is(pitcrew_home: Path) -> None:
    out = pitcrew("doctor")
    assert f"✓ log file: {pitcrew_home / 'logs' / 'pitcrew.log'}" in out.stdout.splitlines()
    checks = {c["name"]: c for c in json.loads(pitcrew("doctor", "--json").stdout)}
    assert checks["log file"] == {"name": "log file", "level": "ok",
                                  "detail": str(pitcrew_home / "logs" / "pitcrew.log")}


def test_without_pitcrew_home_the_log_is_in_the_users_state_folder(tmp_path: Path) -> None:
    """Linux: the XDG state folder, not beside the data folder."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PITCREW_HOME", "XDG_", "DISPLAY"))}
    env["HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-m", "pitcrew.supervisor", "doctor", "--json"],
                         capture_output=True, text=True, env=env, timeout=60)
    checks = {c["name"]: c for c in json.loads(out.stdout)}
    log = tmp_path / ".local" / "state" / "pitcrew" / "log" / "pitcrew.log"
    assert checks["log file"] == {"name": "log file", "level": "ok", "detail": str(log)}
    assert checks["data folder"]["detail"] == str(tmp_path / ".local" / "share" / "pitcrew")
