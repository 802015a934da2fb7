"""Errors that reach the user as one clear line (never a traceback)."""

from __future__ import annotations


class PitcrewError(Exception):
    """Base for errors the command line prints as `pitcrew: <message>`."""


class ConfigError(PitcrewError):
    """A user-editable or shipped data file is malformed.

    The message always starts with the file (and field) at fault, e.g.
    `providers/codex.toml: resume.by_id: unknown placeholder {sesion_id}`.
    """

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.detail = message


class TmuxError(PitcrewError):
    """tmux could not do what was asked (server gone, pane gone, bad target)."""


class TmuxNotFound(TmuxError):
    """The tmux binary is not installed or not on PATH."""


class TmuxTimeout(TmuxError):
    """tmux did not answer in time (hung): what it would have said is unknown — not "no
    server", not "no pane"."""


class NotTyped(TmuxError):
    """Nothing was typed: the pane may not be typed into now (gone, or in copy mode, where
    every key is a copy-mode command)."""
