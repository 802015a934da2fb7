# Shared steps for scripts/install.sh and scripts/test.sh. Sourced, not run.
# Each step is idempotent and quick when its work is already done.

PITCREW_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$PITCREW_ROOT/.venv"

say() { printf '\033[1mpitcrew:\033[0m %s\n' "$*"; }
die() { printf 'pitcrew: %s\n' "$*" >&2; exit 1; }

# What Pitcrew needs at run time: tmux, and the X/EGL/DBus libraries of Qt's xcb plugin.
RUNTIME_PACKAGES=(
  tmux ca-certificates
  libegl1 libgl1 libglib2.0-0 libfontconfig1 libfreetype6 libdbus-1-3 libxkbcommon0
  libxkbcommon-x11-0 libx11-xcb1 libxcb1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1
  libxcb-image0 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1
  libxcb-xfixes0 libxcb-xkb1 libxcb-glx0 libxcb-util1 fonts-dejavu-core
)
# What the test suite adds: a virtual display, a tray host, a private session bus, a
# notification daemon, a secret service, and the X tools tests click and look with.
TEST_PACKAGES=(
  xvfb xauth x11-utils xdotool imagemagick trayer
  dbus dbus-daemon dbus-bin dunst gnome-keyring
  zsh                                  # a second interactive shell for the launch-style tests
  openssh-server openssh-client        # a private sshd on 127.0.0.1 for the remote-host tests
  chromium                             # renders the HTML incident report in its test
)
# The real agent CLIs' tests (tests/e2e/real/) install the CLIs with npm; node runs their
# postinstall steps. Only when no node/npm is on PATH (a fresh machine) are these installed.
NODE_PACKAGES=(nodejs npm)

# ensure_packages PKG... — install the Debian packages that are missing (apt, as root or sudo).
ensure_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null; then
    die "please install: ${missing[*]} (no apt-get on this machine)"
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "run as root, or install sudo, to install: ${missing[*]}"
    sudo=(sudo)
  fi
  say "installing system packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q >/dev/null
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_system_packages() {  # runtime | test
  case "$(uname -s)" in
    Darwin)
      command -v tmux >/dev/null || { command -v brew >/dev/null && brew install tmux; } \
        || die "please install tmux (brew install tmux)"
      return 0 ;;
  esac
  command -v dpkg-query >/dev/null || {
    command -v tmux >/dev/null || die "please install tmux with your package manager"
    say "not a Debian-like system: install Qt's X11/EGL libraries yourself if the tray fails"
    return 0
  }
  local pkgs=("${RUNTIME_PACKAGES[@]}")
  [ "${1:-runtime}" = test ] && pkgs+=("${TEST_PACKAGES[@]}")
  python3 -c 'import ensurepip, venv' 2>/dev/null || pkgs+=(python3-venv)
  if [ "${1:-runtime}" = test ] && ! { command -v node && command -v npm; } >/dev/null; then
    pkgs+=("${NODE_PACKAGES[@]}")
  fi
  ensure_packages "${pkgs[@]}"
}

# ensure_real_clis — the real agent CLIs of tests/e2e/real/clis.txt, each at its pinned version
# in build/realcli/<dir>-<version>/ (npm install --prefix; skipped when that version is there).
# Nothing is installed globally, and the CLIs never update themselves there (the tests run them
# with DISABLE_AUTOUPDATER=1).
ensure_real_clis() {
  local list="$PITCREW_ROOT/tests/e2e/real/clis.txt" dir pkg version prefix bin
  command -v npm >/dev/null || die "npm is needed to install the real CLIs the tests run"
  while read -r dir pkg version; do
    case "$dir" in ''|'#'*) continue ;; esac
    prefix="$PITCREW_ROOT/build/realcli/$dir-$version"
    bin="$prefix/node_modules/.bin/$dir"
    if [ -x "$bin" ] && [ -f "$prefix/.installed" ]; then
      continue
    fi
    say "installing $pkg@$version into ${prefix#"$PITCREW_ROOT"/}"
    rm -rf "$prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
      "$pkg@$version" >/dev/null || die "npm could not install $pkg@$version"
    DISABLE_AUTOUPDATER=1 HOME="$prefix" "$bin" --version 2>/dev/null | grep -qF "$version" \
      || die "$pkg@$version installed, but $bin --version does not say $version"
    touch "$prefix/.installed"
  done < "$list"
}

# ensure_venv [EXTRAS] — .venv with Pitcrew installed (editable), plus optional extras.
ensure_venv() {
  local extras=${1:-}
  command -v python3 >/dev/null || die "python3 is required (3.11 or newer)"
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "Python 3.11 or newer is required (found $(python3 --version 2>&1))"
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating a virtual environment in $VENV"
    python3 -m venv "$VENV"
  fi
  local spec="$PITCREW_ROOT"
  [ -n "$extras" ] && spec="$PITCREW_ROOT[$extras]"
  local stamp="$VENV/.pitcrew-installed-$extras"
  if [ ! -f "$stamp" ] || [ "$PITCREW_ROOT/pyproject.toml" -nt "$stamp" ]; then
    say "installing Pitcrew${extras:+ with $extras extras} into $VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$spec" 2>&1 \
      | grep -v "^WARNING: Location" || true
    "$VENV/bin/python" -c 'import pitcrew.supervisor.cli.main' || die "the install did not complete"
    touch "$stamp"
  fi
}

# stage_pkgroot — build/pkgroot/pitcrew/{supervisor,desktop,resources} as links to the
# repository's folders: the installed `pitcrew` layout as plain folders, for the tools that do
# not follow an editable install's import hook (mypy, PyInstaller).
stage_pkgroot() {
  local stage="$PITCREW_ROOT/build/pkgroot/pitcrew" name
  mkdir -p "$stage"
  [ -f "$stage/__init__.py" ] || echo '"""Pitcrew (staged layout for mypy and PyInstaller)."""' > "$stage/__init__.py"
  for name in supervisor desktop resources; do
    [ -L "$stage/$name" ] || ln -s "../../../$name" "$stage/$name"
  done
}
