"""Pitcrew's supervisor: everything that watches, decides and acts, with no Qt import.

Installed as `pitcrew.supervisor` (pyproject's package-dir maps the repository's folders under
one `pitcrew` package, so nothing named `supervisor` lands in site-packages).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pitcrew")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
