#!/usr/bin/env bash
# Recaptures the seeds "from a real server": starts a throwaway PostgreSQL (scripts/pg-temp.sh), builds
# fuzz_capture_seeds in the sanitizer/fuzz build dir and runs it, which replaces the captured files (named by
# their SHA-1) in tests/fuzz/corpus/frames and tests/fuzz/corpus/pgoutput. Review and commit the result.
#
#   tests/fuzz/capture-seeds.sh [BUILD_DIR]     (default: build-asan, configured as scripts/sanitize-and-fuzz.sh does)
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="${1:-${OUTBOX_ASAN_BUILD_DIR:-$ROOT/build-asan}}"

if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DOUTBOX_SANITIZE=ON -DOUTBOX_FUZZ=ON -DOUTBOX_WERROR=OFF >/dev/null
fi
ninja -C "$BUILD" fuzz_capture_seeds >/dev/null

WORK="$(mktemp -d /tmp/outbox-capture.XXXXXX)"
chmod 755 "$WORK"
cleanup() {
  bash "$ROOT/scripts/pg-temp.sh" stop "$WORK/pg" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
eval "$(bash "$ROOT/scripts/pg-temp.sh" start "$WORK/pg" | grep '^PGPORT=')"
"$BUILD/tests/fuzz/fuzz_capture_seeds" "host=127.0.0.1 port=$PGPORT user=postgres dbname=postgres" "$HERE/corpus"
