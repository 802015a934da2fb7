"""Secrets in the OS keyring: round trips through a real gnome-keyring (Secret Service on a
private session bus) via the real `pitcrew secret` command, and one clear line — never a
traceback — when there is no keyring."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pitcrew.supervisor.adapters import secrets
from pitcrew.supervisor.core.errors import PitcrewError
from tests.support.desktop import Desktop, Missing

REPO = Path(__file__).resolve().parent.parent
NO_KEYRING = "pitcrew: no keyring is available to keep secrets"


def pitcrew(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args], input=stdin, env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=60)


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    """No keyring choice from the outside: no PYTHON_KEYRING_BACKEND, no keyringrc.cfg."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHON_KEYRING_BACKEND", "DBUS_SESSION_BUS_ADDRESS")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return env


@pytest.fixture
def secret_service(desktop: Desktop, clean_env: dict[str, str]) -> dict[str, str]:
    try:
        return {**clean_env, **desktop.start_keyring()}
    except Missing as exc:
        if os.environ.get("PITCREW_TEST_REQUIRE_DESKTOP") == "1":
            raise
        pytest.skip(str(exc))


def test_a_secret_round_trips_through_the_real_secret_service(
        secret_service: dict[str, str]) -> None:
    env = secret_service
    out = pitcrew(env, "secret", "set", "checker.api-key", stdin="s3cr3t value\n")
    assert (out.returncode, out.stdout) == (0, "Stored checker.api-key in the keyring.\n"), \
        out.stderr
    status = pitcrew(env, "secret", "status", "checker.api-key")
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines() == [
        "checker.api-key: set",
        "keyring: keyring.backends.SecretService.Keyring is available (service 'pitcrew')"]
    read = subprocess.run(
        [sys.executable, "-c", "from pitcrew.supervisor.adapters.secrets import get_secret; "
         "print(repr(get_secret('checker.api-key')))"],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert read.stdout == "'s3cr3t value'\n", read.stderr    # the newline from stdin is not kept

    out = pitcrew(env, "secret", "delete", "checker.api-key")
    assert out.stdout == "Deleted checker.api-key from the keyring.\n", out.stderr
    assert pitcrew(env, "secret", "status", "checker.api-key").stdout.startswith(
        "checker.api-key: not set\n")
    out = pitcrew(env, "secret", "delete", "checker.api-key")
    assert (out.returncode, out.stdout) == (0, "checker.api-key was not in the keyring.\n")


@pytest.mark.parametrize("args", [["secret", "status"], ["secret", "set", "api"],
                                  ["secret", "delete", "api"]])
def test_the_fail_backend_gives_one_clear_line(clean_env: dict[str, str], args: list[str]) -> None:
    env = {**clean_env, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    out = pitcrew(env, *args, stdin="value\n")
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(NO_KEYRING), out.stderr
    assert "gnome-keyring or KWallet" in lines[0] and "PYTHON_KEYRING_BACKEND" in lines[0]
    assert "Traceback" not in out.stderr


def test_without_a_session_bus_there_is_no_keyring_and_it_says_so(
        clean_env: dict[str, str]) -> None:
    out = pitcrew(clean_env, "secret", "status")        # no bus: Secret Service is out
    assert out.returncode == 2 and out.stderr.startswith(NO_KEYRING), out.stderr
    assert "Traceback" not in out.stderr


def test_the_null_backend_is_not_a_keyring(clean_env: dict[str, str]) -> None:
    env = {**clean_env, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    out = pitcrew(env, "secret", "set", "api", stdin="value")
    assert out.returncode == 2
    assert out.stderr.startswith(f"{NO_KEYRING} (the null backend forgets everything)")


@pytest.fixture
def broken_keyring() -> Iterator[None]:
    """A keyring whose backend fails the way a locked or vanished one does."""
    import keyring
    from keyring.backend import KeyringBackend
    from keyring.errors import KeyringLocked

    class Locked(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def get_password(self, service: str, username: str) -> str | None:
            raise KeyringLocked("Failed to unlock the collection!")

        def set_password(self, service: str, username: str, password: str) -> None:
            raise KeyringLocked("Failed to unlock the collection!")

        def delete_password(self, service: str, username: str) -> None:
            raise KeyringLocked("Failed to unlock the collection!")

    before = keyring.get_keyring()
    keyring.set_keyring(Locked())
    yield
    keyring.set_keyring(before)


@pytest.mark.usefixtures("broken_keyring")
def test_a_failing_backend_is_a_pitcrew_error_naming_it() -> None:
    with pytest.raises(PitcrewError, match=r"Locked could not read the secret: Failed to "
                       r"unlock the collection!\): install and unlock gnome-keyring"):
        secrets.get_secret("api")
    with pytest.raises(PitcrewError, match="could not store the secret"):
        secrets.set_secret("api", "v")


def test_names_are_checked_before_the_keyring_is_touched() -> None:
    with pytest.raises(PitcrewError, match="bad secret name 'has space'"):
        secrets.get_secret("has space")
