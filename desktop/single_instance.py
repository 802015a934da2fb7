"""One Pitcrew tray app per user: a second launch hands its request to the first and exits.

The first instance listens on a QLocalServer named per user (uid, plus a hash of PITCREW_HOME
when set, so test homes and side-by-side installs never meet). A later launch connects, writes
one JSON line (a list of words such as ["show"] or ["show", "diagnosis"]) and learns that it
is not first. A socket file left by a crashed instance accepts no connection: it is removed
and the new launch listens in its place. A lock file serialises claims, so two launches
racing each other cannot both remove the other's socket.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from PySide6.QtCore import QDir, QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

CONNECT_MS = 1000   # a live instance answers a local connect at once; this is only a bound
WRITE_MS = 2000


def server_name(environ: dict[str, str] | None = None) -> str:
    """The per-user name of the local socket (a file in the temp dir on Unix)."""
    env = os.environ if environ is None else environ
    uid = os.getuid() if hasattr(os, "getuid") else (env.get("USERNAME") or "user")
    name = f"pitcrew-{uid}"
    home = env.get("PITCREW_HOME")
    if home:
        name += "-" + hashlib.sha256(os.path.abspath(home).encode()).hexdigest()[:12]
    return name


class SingleInstance(QObject):
    """`claim(message)`: True when this process is the one instance (and now listens), False
    when another instance was told `message`. `activated(list)` fires in the first instance
    for each later launch, with its message."""

    activated = Signal(list)

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self._server: QLocalServer | None = None
        self._buffers: dict[QLocalSocket, bytearray] = {}

    @property
    def listening(self) -> bool:
        return self._server is not None and self._server.isListening()

    def claim(self, message: list[str] | None = None) -> bool:
        lock = QLockFile(str(Path(QDir.tempPath()) / f"{self.name}.lock"))
        lock.setStaleLockTime(0)                     # stale only when its process is gone
        if not lock.tryLock(10_000):
            log.warning("could not take %s; carrying on without it", lock.fileName())
        try:
            if self._tell_running(message or ["show"]):
                return False
            # Nobody answered: any socket file left behind is from a crashed instance.
            QLocalServer.removeServer(self.name)
            server = QLocalServer(self)
            server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
            if not server.listen(self.name):
                log.warning("single instance: cannot listen on %s: %s", self.name,
                            server.errorString())
                return True                          # run anyway, just not findable
            server.newConnection.connect(self._accept)
            self._server = server
            log.info("single instance: listening on %s", server.fullServerName())
            return True
        finally:
            lock.unlock()

    def _tell_running(self, message: list[str]) -> bool:
        sock = QLocalSocket()
        sock.connectToServer(self.name)
        if not sock.waitForConnected(CONNECT_MS):
            return False
        sock.write(json.dumps(message).encode() + b"\n")
        sent = sock.waitForBytesWritten(WRITE_MS) or sock.bytesToWrite() == 0
        sock.disconnectFromServer()
        if sock.state() != QLocalSocket.LocalSocketState.UnconnectedState:
            sock.waitForDisconnected(WRITE_MS)
        if not sent:
            log.warning("single instance: the running instance did not take %s", message)
        return True

    def _accept(self) -> None:
        assert self._server is not None
        while (sock := self._server.nextPendingConnection()) is not None:
            self._buffers[sock] = bytearray()
            sock.readyRead.connect(lambda s=sock: self._read(s))
            sock.disconnected.connect(lambda s=sock: self._closed(s))
            if sock.bytesAvailable():
                self._read(sock)

    def _read(self, sock: QLocalSocket) -> None:
        buf = self._buffers.get(sock)
        if buf is None:
            return
        buf += bytes(sock.readAll().data())
        while b"\n" in buf:
            line, _, rest = bytes(buf).partition(b"\n")
            buf[:] = rest
            self._deliver(line)

    def _closed(self, sock: QLocalSocket) -> None:
        self._read(sock)
        buf = self._buffers.pop(sock, bytearray())
        if buf.strip():
            self._deliver(bytes(buf))
        sock.deleteLater()

    def _deliver(self, line: bytes) -> None:
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError:
            log.warning("single instance: ignored a message that is not JSON: %r", line[:80])
            return
        if not isinstance(message, list) or not all(isinstance(w, str) for w in message):
            log.warning("single instance: ignored %r (want a list of words)", message)
            return
        log.info("single instance: another launch asked for %s", message)
        self.activated.emit(message)

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
