#!/usr/bin/env bash
# Install Pitcrew and start it: system packages (tmux, Qt's libraries), a virtual environment
# with Pitcrew in it, a `pitcrew` command in ~/.local/bin, the desktop launcher — then the
# tray app when there is a display, or `pitcrew watch` (headless) when there is not.
#
#   bash scripts/install.sh            install (or update) and start
#   bash scripts/install.sh --no-start install only
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_system_packages runtime
ensure_venv

bin_dir="$HOME/.local/bin"
mkdir -p "$bin_dir"
ln -sf "$VENV/bin/pitcrew" "$bin_dir/pitcrew"
if [ "$(uname -s)" = Linux ]; then
  apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
  icons="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/256x256/apps"
  mkdir -p "$apps" "$icons"
  cp "$PITCREW_ROOT/resources/icons/pitcrew-256.png" "$icons/pitcrew.png"
  sed "s|^Exec=.*|Exec=$VENV/bin/pitcrew|" "$PITCREW_ROOT/resources/pitcrew.desktop" \
    > "$apps/pitcrew.desktop"
fi
say "installed: $("$VENV/bin/pitcrew" --version) — command: $bin_dir/pitcrew"
case ":$PATH:" in *":$bin_dir:"*) ;; *) say "add $bin_dir to your PATH to run \`pitcrew\` anywhere";; esac

[ "${1:-}" = "--no-start" ] && exit 0
exec "$VENV/bin/pitcrew"
