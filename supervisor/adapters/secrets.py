"""Secrets Pitcrew keeps (a checker's API key, a notification webhook) live in the OS keyring.

Never in config files. Every entry is stored under the service "pitcrew" with the secret's
name as the user name. When no usable keyring exists — keyring's fail backend, a chainer with
nothing in it, the null backend that silently forgets, or any error from the backend — the
caller gets a `PitcrewError` whose one-line message says what to do; never a traceback.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from pitcrew.supervisor.core.errors import PitcrewError

SERVICE = "pitcrew"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


class NoKeyring(PitcrewError):
    """No usable OS keyring on this machine."""


def _advice() -> str:
    if sys.platform == "darwin":
        return "Pitcrew uses the macOS Keychain; check that your login keychain is unlocked"
    if sys.platform == "win32":
        return "Pitcrew uses the Windows Credential Manager; check that it is available"
    return ("install and unlock gnome-keyring or KWallet (a Secret Service on the session "
            "bus), or set PYTHON_KEYRING_BACKEND to an alternative backend such as "
            "keyrings.alt.file.PlaintextKeyring")


def no_keyring(why: str) -> NoKeyring:
    return NoKeyring(f"no keyring is available to keep secrets ({why}): {_advice()}")


def backend_name(backend: Any) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _keyring() -> Any:
    """The keyring backend, or NoKeyring when there is none that would keep a secret."""
    try:
        import keyring
        from keyring.backends import chainer, fail, null
    except ImportError as exc:
        raise no_keyring(f"the keyring package is missing: {exc}") from None
    try:
        backend = keyring.get_keyring()
    except Exception as exc:  # a backend that breaks while being chosen
        raise no_keyring(f"{type(exc).__name__}: {exc}") from None
    if isinstance(backend, fail.Keyring):
        raise no_keyring("no keyring backend was found")
    if isinstance(backend, null.Keyring):
        raise no_keyring("the null backend forgets everything")
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        raise no_keyring("no keyring backend was found")
    return backend


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise PitcrewError(f"bad secret name {name!r}: use letters, digits and _ . : - "
                           "(at most 128 characters)")


def _failed(what: str, backend: Any, exc: Exception) -> PitcrewError:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return no_keyring(f"{backend_name(backend)} could not {what}: {detail}")


def get_secret(name: str) -> str | None:
    """The secret called `name`, or None when it is not set."""
    _check_name(name)
    backend = _keyring()
    try:
        value = backend.get_password(SERVICE, name)
    except Exception as exc:  # locked collection, dismissed prompt, bus gone, …
        raise _failed("read the secret", backend, exc) from None
    return None if value is None else str(value)


def set_secret(name: str, value: str) -> None:
    _check_name(name)
    if not value:
        raise PitcrewError(f"refusing to store an empty secret for {name}")
    backend = _keyring()
    try:
        backend.set_password(SERVICE, name, value)
    except Exception as exc:
        raise _failed("store the secret", backend, exc) from None


def delete_secret(name: str) -> bool:
    """Forget the secret called `name`; False when there was none."""
    if get_secret(name) is None:
        return False
    backend = _keyring()
    try:
        backend.delete_password(SERVICE, name)
    except Exception as exc:
        raise _failed("delete the secret", backend, exc) from None
    return True


def status() -> str:
    """One line naming the keyring in use, after a real read through it."""
    backend = _keyring()
    try:
        backend.get_password(SERVICE, "pitcrew-status-probe")
    except Exception as exc:
        raise _failed("be read", backend, exc) from None
    return f"keyring: {backend_name(backend)} is available (service {SERVICE!r})"
