"""Pitcrew's supervisor: everything that watches, decides and acts, with no Qt import.

The package name is shared with the unrelated `supervisord` project; Pitcrew installs only into
its own virtual environment or bundle, and a test checks that this module is ours.
"""

from importlib.metadata import PackageNotFoundError, version

PITCREW_MARK = "pitcrew"  # tests assert this to tell our `supervisor` from supervisord's

try:
    __version__ = version("pitcrew")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
