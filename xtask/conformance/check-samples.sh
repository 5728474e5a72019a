#!/usr/bin/env bash
# Run every sample op-script through both references and compare the normalized output byte for byte with
# the expected files:
#   shared/conformance/scripts/<s>.json  ->  shared/conformance/expected/openclaw-2026.6.11/<s>.json
#                                        ->  shared/conformance/expected/pi-0.73.1/<s>.json
# Exits non-zero on any mismatch (a unified diff of the first lines is printed) or runner failure.
#
#   xtask/conformance/check-samples.sh [--install] [--scripts DIR] [--expected-root DIR] [openclaw|pi ...]
#
# --install        run install.sh first
# --scripts        directory of op-scripts (default: $CONFORMANCE_DIR/scripts)
# --expected-root  directory holding openclaw-2026.6.11/ and pi-0.73.1/ (default: $CONFORMANCE_DIR/expected)
# CONFORMANCE_DIR defaults to <repo>/../shared/conformance. Works from any cwd.
# Example (draft scripts, openclaw only):
#   check-samples.sh --scripts tests/conformance/scripts \
#     --expected-root tests/conformance/expected openclaw
# (for the whole corpus prefer `cargo xtask conformance --live`, which has a timeout: pi 0.73.1 never
# finishes x01/x02)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
conf="${CONFORMANCE_DIR:-$repo/../shared/conformance}"

scripts_dir="$conf/scripts"
expected_root="$conf/expected"
refs=()
install=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --install) install=1 ;;
    --scripts) scripts_dir="${2:?--scripts needs a directory}"; shift ;;
    --expected-root) expected_root="${2:?--expected-root needs a directory}"; shift ;;
    openclaw | pi) refs+=("$1") ;;
    *) echo "check-samples.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ "${#refs[@]}" -gt 0 ] || refs=(openclaw pi)

if [ "$install" = 1 ]; then "$here/install.sh" "${refs[@]}"; fi
if ! command -v node >/dev/null 2>&1; then
  echo "check-samples.sh: 'node' is not on PATH" >&2
  exit 2
fi
if ! compgen -G "$scripts_dir/*.json" >/dev/null; then
  echo "check-samples.sh: no op-scripts in $scripts_dir (set CONFORMANCE_DIR or pass --scripts)" >&2
  exit 2
fi

expected_dir() {
  case "$1" in
    openclaw) echo "$expected_root/openclaw-2026.6.11" ;;
    pi) echo "$expected_root/pi-0.73.1" ;;
  esac
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

pass=0
fail=0
for ref in "${refs[@]}"; do
  exp_dir="$(expected_dir "$ref")"
  for script in "$scripts_dir"/*.json; do
    name="$(basename "$script")"
    out="$tmp/$ref-$name"
    if ! node "$here/runner.mjs" --reference "$ref" --script "$script" >"$out" 2>"$out.err"; then
      echo "FAIL $ref $name: runner exited non-zero" >&2
      sed 's/^/  /' "$out.err" >&2
      fail=$((fail + 1))
      continue
    fi
    if [ ! -f "$exp_dir/$name" ]; then
      echo "FAIL $ref $name: no expected file $exp_dir/$name" >&2
      fail=$((fail + 1))
    elif cmp -s "$out" "$exp_dir/$name"; then
      echo "ok   $ref $name"
      pass=$((pass + 1))
    else
      echo "FAIL $ref $name: output differs from $exp_dir/$name" >&2
      diff -u "$exp_dir/$name" "$out" | head -40 >&2 || true
      fail=$((fail + 1))
    fi
  done
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
