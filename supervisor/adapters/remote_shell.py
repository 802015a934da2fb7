"""One long-lived `sh` on a remote host, over its ssh link, that runs Pitcrew's short commands.

A command run as its own ssh session costs a session on the far side and a run of the remote
user's login shell and its rc files (a `.bashrc` that runs `pyenv init` costs ~0.2 s of CPU
each time). Pitcrew's short commands — tmux, `ps`, `readlink`, `cat`, `find`/`head`, `kill` —
all go to one `sh` started once per connection instead: the login shell runs once, each
command costs only itself.

Protocol: each command runs in a subshell (an `exit` in it ends only itself) with stdin
/dev/null (it never reads the protocol) and stderr to a private temporary file; after it the
shell prints a marker with a fresh token and the exit status, the stderr, and a closing
marker. A command that does not answer within its timeout ends the shell (the next command
starts a new one); so does a link that drops. The commands are built with shlex quoting: a
value can never end the subshell early.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pitcrew.supervisor.core.errors import TmuxError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Ran:
    """What a command did (the shape of subprocess.CompletedProcess that callers read)."""

    returncode: int
    stdout: bytes
    stderr: bytes


class RemoteShell:
    def __init__(self, name: str, argv: Callable[[str], Sequence[str]]) -> None:
        """`argv(command)`: the local command line that runs `command` on the host."""
        self.name = name
        self.argv = argv
        self.proc: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()
        self.started = 0              # shells started (tests count them)

    def _start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            list(self.argv('exec sh -c \'E=$(mktemp) || exit 1; trap "rm -f \\"$E\\"" EXIT; '
                           'export E; sh\'')),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.started += 1
        return proc

    def run(self, command: str, timeout: float) -> Ran:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.proc = self._start()
            try:
                return self._ask(self.proc, command, timeout)
            except TmuxError:
                self._end()
                raise

    def _ask(self, proc: subprocess.Popen[bytes], command: str, timeout: float) -> Ran:
        assert proc.stdin is not None and proc.stdout is not None
        token = uuid.uuid4().hex
        script = (f"( {command}\n) </dev/null 2>\"$E\"; printf '\\n\\036{token} %d\\n' $?; "
                  f"cat \"$E\"; printf '\\036{token}\\n'\n")
        try:
            proc.stdin.write(script.encode())
            proc.stdin.flush()
        except (OSError, ValueError):
            raise TmuxError(f"host {self.name}: the connection is gone") from None
        end = f"\x1e{token}\n".encode()
        data = b""
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while not data.endswith(end):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TmuxError(f"host {self.name} did not answer within {timeout:g}s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise TmuxError(f"host {self.name}: the connection is gone")
            data += chunk
        head, _, rest = data[: -len(end)].partition(f"\n\x1e{token} ".encode())
        status, _, stderr = rest.partition(b"\n")
        return Ran(int(status or b"255"), head, stderr)

    def _end(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(2)

    def stop(self) -> None:
        with self.lock:
            proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()       # EOF: the shell exits and removes its temp file
        try:
            proc.wait(2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
