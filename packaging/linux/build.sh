#!/usr/bin/env bash
# Build the Linux installers: the PyInstaller one-folder bundle, a portable .tar.gz of it, and
# a .deb (dpkg-deb) that installs it under /opt/pitcrew with `pitcrew` on PATH, the launcher
# and icons under /usr/share. Prints the bundle's size and the build time.
#
#   bash packaging/linux/build.sh          → build/pitcrew_<version>_<arch>.deb
#                                            build/pitcrew-<version>-linux-<arch>.tar.gz
set -euo pipefail
exec 3>&1 1>&2          # progress goes to stderr; stdout carries only the .deb's path
source "$(dirname "$0")/../../scripts/lib.sh"
cd "$PITCREW_ROOT"
started=$(date +%s.%N)

ensure_system_packages runtime
ensure_packages binutils dpkg-dev          # PyInstaller reads ELF headers; dpkg-deb builds
ensure_venv package
stage_pkgroot

VERSION=$("$VENV/bin/python" -c 'from pitcrew.supervisor import __version__; print(__version__)')
ARCH=$(dpkg --print-architecture)
BUILD="$PITCREW_ROOT/build"
say "building the bundle of Pitcrew $VERSION ($ARCH)"
rm -rf "$BUILD/dist/pitcrew" "$BUILD/deb"
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN --distpath "$BUILD/dist" \
  --workpath "$BUILD/work" packaging/pitcrew.spec 2>&1 | grep -v "required via ctypes not found" \
  || true
BUNDLE="$BUILD/dist/pitcrew"
[ -x "$BUNDLE/pitcrew" ] || die "PyInstaller did not produce $BUNDLE/pitcrew"
[ "$("$BUNDLE/pitcrew" --version)" = "pitcrew $VERSION" ] || die "the bundle's version is wrong"

# -- the portable .tar.gz ----------------------------------------------------------------------
TARBALL="$BUILD/pitcrew-$VERSION-linux-$ARCH.tar.gz"
tar -C "$BUILD/dist" -czf "$TARBALL" pitcrew

# -- the .deb ------------------------------------------------------------------------------------
STAGE="$BUILD/deb/pitcrew_${VERSION}_$ARCH"
mkdir -p "$STAGE/opt" "$STAGE/usr/bin" "$STAGE/usr/share/applications" "$STAGE/DEBIAN" \
  "$STAGE/usr/share/doc/pitcrew"
cp -a "$BUNDLE" "$STAGE/opt/pitcrew"
ln -s /opt/pitcrew/pitcrew "$STAGE/usr/bin/pitcrew"
install -m 644 resources/pitcrew.desktop "$STAGE/usr/share/applications/pitcrew.desktop"
for size in 48 128 256; do
  install -D -m 644 "resources/icons/pitcrew-$size.png" \
    "$STAGE/usr/share/icons/hicolor/${size}x$size/apps/pitcrew.png"
done
install -D -m 644 resources/icons/pitcrew.svg \
  "$STAGE/usr/share/icons/hicolor/scalable/apps/pitcrew.svg"
cat > "$STAGE/usr/share/doc/pitcrew/copyright" <<COPY
Pitcrew $VERSION — proprietary. The bundle contains Python, Qt for Python (LGPLv3) and the
libraries listed in /opt/pitcrew/_internal/*.dist-info, under their own licences.
COPY
DEPENDS=$(IFS=,; echo "${RUNTIME_PACKAGES[*]}" | sed 's/,/, /g')
cat > "$STAGE/DEBIAN/control" <<CONTROL
Package: pitcrew
Version: $VERSION
Architecture: $ARCH
Maintainer: Pitcrew <dev@pitcrew.local>
Section: devel
Priority: optional
Installed-Size: $(du -sk "$STAGE" | cut -f1)
Depends: $DEPENDS
Description: keeps your AI coding agents working
 Pitcrew watches agent CLIs (Claude Code, Codex, Gemini CLI, OpenCode, ...) running in tmux
 panes, tells why one stopped, resumes crashed or disconnected agents in their own session,
 and notifies you only when a human is needed. Tray app, and "pitcrew watch" headless.
CONTROL
for script in postinst postrm; do
  cat > "$STAGE/DEBIAN/$script" <<'HOOK'
#!/bin/sh
set -e
# refresh the menus' view of the launcher and icons (both tools are optional)
if command -v update-desktop-database >/dev/null 2>&1; then
  update-desktop-database -q /usr/share/applications || true
fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then
  gtk-update-icon-cache -q -t /usr/share/icons/hicolor || true
fi
HOOK
  chmod 755 "$STAGE/DEBIAN/$script"
done
DEB="$BUILD/pitcrew_${VERSION}_$ARCH.deb"
dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$DEB" >/dev/null

elapsed=$(python3 -c "import time; print(f'{time.time() - $started:.0f}')")
say "bundle: $(du -sh "$BUNDLE" | cut -f1) unpacked; $(basename "$TARBALL"): $(du -h "$TARBALL" | cut -f1); $(basename "$DEB"): $(du -h "$DEB" | cut -f1); built in ${elapsed} s"
echo "$DEB" >&3
