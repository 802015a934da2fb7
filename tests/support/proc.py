"""Running a real `pitcrew` process and reading its output as it comes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence

from tests.support.waiting import wait_until


class Running:
    """A background `python -m pitcrew.supervisor …`; a thread collects its output lines."""

    def __init__(self, args: Sequence[str], env: Mapping[str, str] | None = None,
                 drop: Sequence[str] = ("DISPLAY", "WAYLAND_DISPLAY")) -> None:
        full = {**os.environ, **(env or {})}
        for key in drop:
            full.pop(key, None)
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pitcrew.supervisor", *args], env=full, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=1,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def saw(self, text: str) -> bool:
        return any(text in line for line in list(self.lines))

    def wait_for(self, text: str, timeout: float = 20.0) -> None:
        wait_until(lambda: self.saw(text), timeout,
                   message=lambda: f"{text!r} in output:\n" + "\n".join(self.lines))

    def stop(self, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self._reader.join(2)
