"""`git status` of a project folder, read-only and bounded (for a task brief)."""

from __future__ import annotations

import os
import subprocess

GIT_LINES = 60                # lines of `git status` kept


def git_status(cwd: str, timeout: float = 5.0) -> str:
    """`git status --short --branch` of `cwd`, at most GIT_LINES lines; never raises.

    Read-only on purpose: no optional locks (the backup agent may be running git at the same
    moment), no fsmonitor (a repo's config could name a program to run), a minimal C-locale
    environment, no terminal prompts. Failures come back as one explanatory line.
    """
    argv = ["git", "--no-optional-locks", "-C", cwd, "-c", "core.fsmonitor=false",
            "-c", "core.quotepath=off", "status", "--short", "--branch"]
    env = {"PATH": os.environ.get("PATH") or os.defpath, "LC_ALL": "C",
           "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    if os.environ.get("HOME"):
        env["HOME"] = os.environ["HOME"]  # the user's global config (safe.directory)
    try:
        done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"unavailable: git status timed out after {timeout:g}s"
    except OSError as exc:
        missing = isinstance(exc, FileNotFoundError)
        return f"unavailable: {'git is not installed' if missing else exc.strerror or exc}"
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "backslashreplace").strip()
        if "not a git repository" in err:
            return "not a git repository"
        first = err.splitlines()[0] if err else f"exit {done.returncode}"
        return f"git status failed: {first}"
    lines = done.stdout.decode("utf-8", "backslashreplace").splitlines()
    if len(lines) > GIT_LINES:
        lines = [*lines[:GIT_LINES], f"… and {len(lines) - GIT_LINES} more"]
    return "\n".join(lines)


