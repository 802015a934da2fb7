"""One instance per user, with real processes on a real local socket."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QDir

from pitcrew.desktop.single_instance import server_name

REPO = Path(__file__).resolve().parents[2]

# A launch of the app, reduced to the single-instance step: claim, then (if first) print
# each later launch's message and stop after the first one.
LAUNCH = r"""
import json, sys
from PySide6.QtCore import QCoreApplication
from pitcrew.desktop.single_instance import SingleInstance
app = QCoreApplication([])
inst = SingleInstance()
if not inst.claim(json.loads(sys.argv[1])):
    print("handed over", flush=True)
    sys.exit(0)
print("first", flush=True)
def activated(message):
    print("activated", json.dumps(message), flush=True)
    app.quit()
inst.activated.connect(activated)
sys.exit(app.exec())
"""


def launch(message: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", LAUNCH, json.dumps(message)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def first() -> Iterator[subprocess.Popen[str]]:
    proc = launch(["show"])
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "first\n", proc.stderr.read() if proc.stderr else ""
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)                # reaps it and closes its pipes


def test_a_second_launch_hands_its_message_to_the_first(first: subprocess.Popen[str]) -> None:
    second = launch(["show", "diagnosis"])
    out, err = second.communicate(timeout=30)
    assert out == "handed over\n", err
    assert first.stdout is not None
    assert first.stdout.readline() == 'activated ["show", "diagnosis"]\n'
    assert first.wait(10) == 0


def test_a_stale_socket_from_a_crashed_instance_is_taken_over() -> None:
    path = Path(QDir.tempPath()) / server_name()
    path.unlink(missing_ok=True)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))                           # a socket file nobody listens on any more
    dead.close()
    assert path.exists()
    proc = launch(["show"])
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "first\n", proc.stderr.read() if proc.stderr else ""
        out, err = launch(["show"]).communicate(timeout=30)   # and it really listens there
        assert out == "handed over\n", err
        assert proc.stdout.readline() == 'activated ["show"]\n'
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)                # reaps it and closes its pipes


def test_the_name_is_per_user_and_per_pitcrew_home(tmp_path: Path) -> None:
    a = server_name({"PITCREW_HOME": str(tmp_path / "a")})
    b = server_name({"PITCREW_HOME": str(tmp_path / "b")})
    assert a != b and a.startswith(f"pitcrew-{os.getuid()}-")
    assert server_name({}) == f"pitcrew-{os.getuid()}"
