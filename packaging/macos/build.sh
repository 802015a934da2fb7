#!/usr/bin/env bash
# macOS: a menu-bar-only Pitcrew.app (LSUIElement: no Dock icon) in a .dmg.
# NOT RUN YET: written from the PyInstaller, hdiutil and Info.plist documentation; this
# project's build machines are Linux. The app finds Homebrew's tmux: packaging/pitcrew_main.py
# puts /opt/homebrew/bin and /usr/local/bin on PATH (launchd starts apps with a bare PATH).
#
#   bash packaging/macos/build.sh   → build/Pitcrew-<version>.dmg
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
started=$(date +%s)
command -v tmux >/dev/null || { command -v brew >/dev/null && brew install tmux; } \
  || echo "pitcrew: install tmux (brew install tmux): Pitcrew needs it at run time" >&2
VENV=build/venv-macos
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q -e ".[package]"
stage_pkgroot
VERSION=$("$VENV/bin/python" -c 'from pitcrew.supervisor import __version__; print(__version__)')
rm -rf build/dist/Pitcrew.app build/dmg
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN --distpath build/dist \
  --workpath build/work-macos packaging/pitcrew.spec
APP=build/dist/Pitcrew.app
/usr/libexec/PlistBuddy -c "Print :LSUIElement" "$APP/Contents/Info.plist" | grep -q true
"$APP/Contents/MacOS/pitcrew" --version
mkdir -p build/dmg
cp -R "$APP" build/dmg/
ln -s /Applications build/dmg/Applications
DMG="build/Pitcrew-$VERSION.dmg"
hdiutil create -volname "Pitcrew $VERSION" -srcfolder build/dmg -ov -format UDZO "$DMG"
echo "pitcrew: app $(du -sh "$APP" | cut -f1), $(basename "$DMG") $(du -h "$DMG" | cut -f1), built in $(( $(date +%s) - started )) s"
echo "pitcrew: the command line: ln -s /Applications/Pitcrew.app/Contents/MacOS/pitcrew /usr/local/bin/pitcrew"
