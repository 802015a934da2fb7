#!/usr/bin/env bash
# Run the whole test suite on this machine, installing what it needs first: the system
# packages (tmux, Xvfb, a tray host, dbus, dunst, gnome-keyring, node/npm), a virtual
# environment with Pitcrew and its test extras, the real agent CLIs at their pinned versions
# (tests/e2e/real/clis.txt, into build/realcli/), then lint (ruff), types (mypy) and pytest. The tests start their
# own isolated tmux servers and a private Xvfb. Extra arguments go to pytest.
#
# The tests run on several workers (pytest-xdist): most end-to-end tests wait on real time (an
# agent's work, a back-off, a control client connecting), not on the CPU, so there are more
# workers than cores. PITCREW_TEST_WORKERS sets how many; `-n 0` runs everything in one process.
#
#   bash scripts/test.sh                 everything
#   bash scripts/test.sh -k classifier   a subset
#   bash scripts/test.sh -n 0 tests/core one process, one folder
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PITCREW_ROOT"

ensure_system_packages test
ensure_venv test
stage_pkgroot
ensure_real_clis

export PITCREW_TEST_REQUIRE_DESKTOP=1   # a missing desktop piece fails, never skips
unset DISPLAY WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS PITCREW_HOME PITCREW_TMUX_SOCKET
say "lint (ruff) and types (mypy)"
"$VENV/bin/ruff" check supervisor desktop resources tests bench packaging
"$VENV/bin/mypy"
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
workers=${PITCREW_TEST_WORKERS:-$(( cores * 2 > 4 ? cores * 2 : 4 ))}
say "tests (pytest, $workers workers)"
# one test at a time to whichever worker is free, the slowest first (tests/conftest.py)
exec "$VENV/bin/python" -m pytest -n "$workers" --dist load --maxschedchunk 1 "$@"
