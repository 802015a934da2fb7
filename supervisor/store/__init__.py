"""Files Pitcrew keeps: paths, config (and its edits), state, ledger, spools, the lock."""
