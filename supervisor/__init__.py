"""Pitcrew's supervisor: everything that watches, decides and acts, with no Qt import.

Installed as `pitcrew.supervisor` (pyproject's package-dir maps the repository's folders under
one `pitcrew` package, so nothing named `supervisor` lands in site-packages).

`__version__` comes from the package metadata, read when first asked for: importing
importlib.metadata costs ~40 ms, which every `pitcrew` command would otherwise pay.
"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("pitcrew")
    except PackageNotFoundError:  # running from a source tree that was never installed
        found = "0.0.0+source"
    globals()["__version__"] = found
    return found
