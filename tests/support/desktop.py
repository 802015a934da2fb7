"""A headless desktop for tests: Xvfb, a tray host, a private session bus, a notification
daemon. Each piece starts only when a test asks for it and is killed at the end of the run.

Recipe verified on Debian 12 (see ../shared/STACK.md): `Xvfb -displayfd` picks a free display
and says when it is ready; the bus config has no service directories, so nothing is
D-Bus-activated behind our back; readiness is probed with NameHasOwner, which activates nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Missing(RuntimeError):
    """A desktop piece is not installed on this machine."""


class Desktop:
    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self._runtime: Path | None = None
        self.display: str | None = None
        self.bus: str | None = None
        self.tray_started = False

    @property
    def runtime(self) -> Path:
        """The desktop's own folder (logs, configs, the keyring's runtime dir), made on first
        use: in the run's TMPDIR (support/isolation.py), not wherever TMPDIR was at import."""
        if self._runtime is None:
            self._runtime = Path(tempfile.mkdtemp(prefix="pitcrew-xdg-"))
            self._runtime.chmod(0o700)
        return self._runtime

    def _spawn(self, argv: list[str], log: str | None, **kw: object) -> subprocess.Popen[bytes]:
        """Start a piece that dies with this process even when it is not let to stop them:
        an xdist worker gets 5 s to exit after its last test, then a SIGINT, and its
        `pytest_unconfigure` may never run (`setpriv --pdeathsig`, where there is one)."""
        if shutil.which(argv[0]) is None:
            raise Missing(f"{argv[0]} is not installed")
        if shutil.which("setpriv"):
            argv = ["setpriv", "--pdeathsig", "TERM", "--", *argv]
        if log is not None:
            kw.update(stdout=open(self.runtime / log, "wb"),  # noqa: SIM115 - closed at exit
                      stderr=subprocess.STDOUT)
        proc = subprocess.Popen(argv, **kw)  # type: ignore[call-overload]
        self.procs.append(proc)
        return proc

    def start_display(self) -> str:
        if self.display:
            return self.display
        read_fd, write_fd = os.pipe()
        self._spawn(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24",
                     "-nolisten", "tcp"], "xvfb.log", pass_fds=(write_fd,))
        os.close(write_fd)
        with os.fdopen(read_fd) as fh:
            number = fh.readline().strip()
        if not number:
            raise RuntimeError(f"Xvfb did not start: {(self.runtime / 'xvfb.log').read_text()}")
        self.display = f":{number}"
        return self.display

    def start_tray_host(self) -> None:
        if self.tray_started:
            return
        env = {**os.environ, "DISPLAY": self.start_display()}
        self._spawn(["trayer", "--edge", "top", "--align", "right", "--widthtype", "pixel",
                     "--width", "160", "--height", "32", "--SetDockType", "true",
                     "--transparent", "false"], "trayer.log", env=env)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            probe = subprocess.run(["xdotool", "search", "--class", "trayer"], env=env,
                                   capture_output=True)
            if probe.returncode == 0:
                self.tray_started = True
                return
            time.sleep(0.1)
        raise RuntimeError("trayer did not appear")

    def start_bus(self) -> str:
        if self.bus:
            return self.bus
        proc = self._spawn(["dbus-daemon", f"--config-file={HERE / 'session-bus.conf'}",
                            "--nofork", "--print-address=1"], None, stdout=subprocess.PIPE,
                           stderr=open(self.runtime / "dbus.log", "wb"))  # noqa: SIM115
        assert proc.stdout is not None
        address = proc.stdout.readline().decode().strip()
        if not address:
            raise RuntimeError("dbus-daemon did not start: "
                               + (self.runtime / "dbus.log").read_text())
        self.bus = address
        return self.bus

    def start_notifications(self) -> dict[str, str]:
        """dunst on the private bus (nothing times out; its dmenu is a stub that picks a line
        named in DUNST_PICK_FILE). Returns the environment a client needs to reach it."""
        if getattr(self, "_notify_env", None):
            return self._notify_env
        bus = self.start_bus()
        pick = self.runtime / "dunst-pick"
        pick.write_text("")
        config = self.runtime / "dunstrc"
        config.write_text((HERE / "dunstrc.in").read_text().replace(
            "@FAKE_DMENU@", str(HERE / "fake-dmenu.sh")))
        env = {**os.environ, "DISPLAY": self.start_display(), "DBUS_SESSION_BUS_ADDRESS": bus,
               "DUNST_PICK_FILE": str(pick)}
        self._spawn(["dunst", "-config", str(config)], "dunst.log", env=env)
        deadline = time.monotonic() + 10
        while not self.has_owner("org.freedesktop.Notifications"):
            if time.monotonic() > deadline:
                raise RuntimeError("dunst did not take org.freedesktop.Notifications: "
                                   + (self.runtime / "dunst.log").read_text())
            time.sleep(0.1)
        self._notify_env = {"DISPLAY": env["DISPLAY"], "DBUS_SESSION_BUS_ADDRESS": bus,
                            "DUNST_PICK_FILE": str(pick)}
        return self._notify_env

    def start_keyring(self) -> dict[str, str]:
        """gnome-keyring's Secret Service on the private bus, its `login` collection created
        and unlocked with a throwaway password (no prompt). Returns the environment a client
        needs to reach it."""
        if getattr(self, "_keyring_env", None):
            return self._keyring_env
        bus = self.start_bus()
        data = self.runtime / "keyring-data"
        data.mkdir(exist_ok=True)
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus, "XDG_RUNTIME_DIR": str(self.runtime),
               "XDG_DATA_HOME": str(data)}
        proc = self._spawn(["gnome-keyring-daemon", "--foreground", "--unlock",
                            "--components=secrets"], "gnome-keyring.log", env=env,
                           stdin=subprocess.PIPE)
        assert proc.stdin is not None
        proc.stdin.write(b"pitcrew-test-password")
        proc.stdin.close()
        deadline = time.monotonic() + 10
        while not self.has_owner("org.freedesktop.secrets"):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("gnome-keyring did not take org.freedesktop.secrets: "
                                   + (self.runtime / "gnome-keyring.log").read_text())
            time.sleep(0.1)
        self._keyring_env = {"DBUS_SESSION_BUS_ADDRESS": bus,
                             "XDG_RUNTIME_DIR": str(self.runtime), "XDG_DATA_HOME": str(data)}
        return self._keyring_env

    def has_owner(self, name: str) -> bool:
        probe = subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
             "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", f"string:{name}"],
            env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": self.start_bus()},
            capture_output=True, text=True,
        )
        return "true" in probe.stdout

    def stop(self) -> None:
        for proc in reversed(self.procs):
            with contextlib.suppress(OSError):
                proc.terminate()
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(3)
            if proc.poll() is None:
                proc.kill()
        if self._runtime is not None:
            shutil.rmtree(self._runtime, ignore_errors=True)
