#!/usr/bin/env bash
# Applies each one-line mutation of tests/mutations/core_mutations.txt in turn, rebuilds the delivery core's unit
# tests and checks that the named test fails (and that the whole binary passed before). Restores every file.
#   tests/mutations/run.sh [BUILD_DIR]      (default: build)
#   MUTATIONS_MATCHING=Silent tests/mutations/run.sh     only the lines that contain the text
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
LIST="$ROOT/tests/mutations/core_mutations.txt"
BIN="$BUILD/tests/delivery/delivery_core_test"
cd "$ROOT"
ninja -C "$BUILD" delivery_core_test >/dev/null || { echo "build failed before mutating" >&2; exit 2; }
"$BIN" >/dev/null || { echo "the tests fail before mutating" >&2; exit 2; }
caught=0 missed=0
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  [[ -n "${MUTATIONS_MATCHING:-}" && "$line" != *"$MUTATIONS_MATCHING"* ]] && continue
  file="${line%% ==> *}"; rest="${line#* ==> }"
  from="${rest%% ==> *}"; rest="${rest#* ==> }"
  to="${rest%% ==> *}"; test="${rest#* ==> }"
  cp "$file" "$file.orig"
  if ! python3 - "$file" "$from" "$to" <<'PY'
import sys
path, old, new = sys.argv[1:4]
s = open(path).read()
if s.count(old) != 1:
    sys.exit(f"{path}: the line to mutate is found {s.count(old)} times: {old}")
open(path, 'w').write(s.replace(old, new))
PY
  then
    mv "$file.orig" "$file"; missed=$((missed + 1)); continue
  fi
  if ! ninja -C "$BUILD" delivery_core_test >/dev/null 2>&1; then
    result="does not compile"
    missed=$((missed + 1))
  elif "$BIN" --gtest_filter="$test" >/dev/null 2>&1; then
    result="SURVIVED"
    missed=$((missed + 1))
  else
    result="caught"
    caught=$((caught + 1))
  fi
  mv "$file.orig" "$file"
  touch "$file"
  printf '%-9s %s: %s -> %s  [%s]\n' "$result" "$file" "$from" "$to" "$test"
done <"$LIST"
ninja -C "$BUILD" delivery_core_test >/dev/null
echo "mutations caught: $caught, not caught: $missed"
[ "$missed" -eq 0 ]
