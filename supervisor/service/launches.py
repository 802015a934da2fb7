"""How each agent was started, kept in state.json so a restart of Pitcrew still resumes it
the same way (SPEC §7 "Launch styles").

The record holds the agent's environment (it may hold API keys): it lives only in state.json,
which is private to the user (created 0600), never in the ledger or a log line.
"""

from __future__ import annotations

import logging

from pitcrew.supervisor.adapters.processes import LaunchContext

log = logging.getLogger("pitcrew")


def load(saved: object) -> dict[str, LaunchContext]:
    """The launch contexts state.json holds; one that does not read back is dropped."""
    out: dict[str, LaunchContext] = {}
    for key, raw in (saved.items() if isinstance(saved, dict) else ()):
        try:
            out[str(key)] = LaunchContext.from_json(raw)
        except (ValueError, TypeError, KeyError):
            log.warning("state.json: skipping how %s was started (it does not read back)", key)
    return out
