#!/usr/bin/env bash
# The sanitizer and fuzzing pass (what scripts/test.sh runs before its ctest; OUTBOX_SKIP_FUZZ=1 skips it there):
#   1. configures a second build dir with clang, -DOUTBOX_SANITIZE=ON (ASan+UBSan) and -DOUTBOX_FUZZ=ON;
#   2. builds the unit test binaries (every `outbox_add_test(NAME unit ...)` under tests/) and the fuzzers;
#   3. runs `ctest -L unit` there, under ASan/UBSan (any report fails the test);
#   4. runs each libFuzzer target for SECONDS from a scratch copy of its seed corpus (tests/fuzz/corpus/<name>),
#      as many at a time as there are cores, and prints its executions; a crash, leak, timeout or OOM fails.
# Exit status 0 only if every step passed. Crash reproducers are kept in the artifacts dir (rerun one with
# `<build dir>/tests/fuzz/<fuzzer> <file>`).
#
#   scripts/sanitize-and-fuzz.sh [SECONDS]     SECONDS per fuzzer, default 20
#   OUTBOX_ASAN_BUILD_DIR    the build dir (default <repo>/build-asan; re-used, so later runs build incrementally)
#   OUTBOX_FUZZ_ARTIFACTS    where reproducers go (default <build dir>/fuzz-artifacts)
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
source "$HERE/versions.sh"
source "$HERE/lib.sh"
FUZZ_SECONDS="${1:-20}"
BUILD="${OUTBOX_ASAN_BUILD_DIR:-$ROOT/build-asan}"
ARTIFACTS="${OUTBOX_FUZZ_ARTIFACTS:-$BUILD/fuzz-artifacts}"
FUZZERS=(frames_fuzz pgoutput_fuzz config_fuzz)
JOBS="$(nproc 2>/dev/null || echo 2)"

log() { echo "[sanitize-and-fuzz] $*"; }
die() { echo "[sanitize-and-fuzz] $*" >&2; exit 1; }
[[ "$FUZZ_SECONDS" =~ ^[0-9]+$ ]] || die "usage: $0 [SECONDS per fuzzer]"

started=$SECONDS
phase_start=$SECONDS
phase() { log "$1 took $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }

# ---- toolchain ---------------------------------------------------------------------------------
command -v clang >/dev/null && command -v clang++ >/dev/null || die "no clang (scripts/install-deps.sh installs it)"
fuzzer_rt="$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a)"
[ -f "$fuzzer_rt" ] || die "clang's libFuzzer runtime is missing (Debian: libclang-rt-14-dev)"
symbolizer="$(command -v llvm-symbolizer || ls /usr/lib/llvm-*/bin/llvm-symbolizer 2>/dev/null | head -1 || true)"
[ -n "$symbolizer" ] || log "no llvm-symbolizer (Debian: llvm): reports will show addresses, not lines"

# ASan/UBSan options for the tests and the fuzzers: any report is fatal, with a stack trace.
asan="detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1"
export ASAN_OPTIONS="$asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
if [ -n "$symbolizer" ]; then export ASAN_SYMBOLIZER_PATH="$symbolizer" UBSAN_SYMBOLIZER_PATH="$symbolizer"; fi

# ---- configure and build -------------------------------------------------------------------------
# A build dir configured with another compiler cannot be switched to clang in place.
if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$BUILD/CMakeCache.txt"; then
  log "$BUILD was configured with another compiler: starting it afresh"
  rm -rf "$BUILD"
fi
use_compiler_cache "$ROOT"
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DOUTBOX_SANITIZE=ON -DOUTBOX_FUZZ=ON -DOUTBOX_WERROR=OFF "${COMPILER_CACHE_ARGS[@]}" >/dev/null

# The unit-labelled test executables (the e2e/integration ones need services and are not run here).
mapfile -t UNIT_TARGETS < <(sed -n 's/^[[:space:]]*outbox_add_test(\([A-Za-z0-9_]*\)[[:space:]]\{1,\}unit\b.*/\1/p' \
  "$ROOT"/tests/*/CMakeLists.txt "$ROOT"/tests/*/*/CMakeLists.txt | sort -u)
[ "${#UNIT_TARGETS[@]}" -gt 0 ] || die "no unit test targets found under tests/"
log "building with clang (ASan+UBSan): ${UNIT_TARGETS[*]} ${FUZZERS[*]}"
ninja -C "$BUILD" "${UNIT_TARGETS[@]}" "${FUZZERS[@]}" > "$BUILD/sanitize-build.log" 2>&1 || {
  grep -E 'error|FAILED' "$BUILD/sanitize-build.log" | head -40 >&2
  die "build failed (full log: $BUILD/sanitize-build.log)"
}
phase "build"

# ---- unit tests under ASan/UBSan -------------------------------------------------------------------
# A failure here does not stop the fuzzers: the exit status reports both.
failed=()
ctest_log="$BUILD/sanitize-ctest.log"
ctest_status=0
(cd "$BUILD" && ctest -L unit -j"$JOBS" --timeout 120 --output-on-failure) > "$ctest_log" 2>&1 || ctest_status=$?
summary="$(grep -E 'tests passed|tests failed' "$ctest_log" | tail -1 || true)"
log "unit tests under ASan/UBSan: ${summary:-no summary from ctest} (log: $ctest_log)"
if [ "$ctest_status" != 0 ]; then
  failed+=("unit-tests")
  sed -n '/The following tests FAILED/,/Errors while running CTest/p' "$ctest_log" >&2
  grep -E -A30 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$ctest_log" | head -80 >&2 || true
fi
phase "unit tests"

# ---- fuzzers -----------------------------------------------------------------------------------------
SCRATCH="$(mktemp -d /tmp/outbox-fuzz.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT
mkdir -p "$ARTIFACTS"

# run_fuzzer NAME: fuzzes from a copy of the seeds (new inputs stay in the scratch copy), output to SCRATCH/NAME.log.
run_fuzzer() {
  local name="$1" seeds="$ROOT/tests/fuzz/corpus/${1%_fuzz}" dict="$ROOT/tests/fuzz/${1%_fuzz}.dict"
  local args=(-max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$ARTIFACTS/$name-")
  [ -f "$dict" ] && args+=(-dict="$dict")
  rm -f "$ARTIFACTS/$name-"*  # an earlier run's reproducers
  mkdir -p "$SCRATCH/$name"
  cp -R "$seeds/." "$SCRATCH/$name/"
  "$BUILD/tests/fuzz/$name" "${args[@]}" "$SCRATCH/$name" > "$SCRATCH/$name.log" 2>&1
}

log "fuzzing ${FUZZERS[*]} for $FUZZ_SECONDS s each, $JOBS at a time"
for name in "${FUZZERS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  { status=0; run_fuzzer "$name" || status=$?; echo "$status" > "$SCRATCH/$name.status"; } &
done
wait

for name in "${FUZZERS[@]}"; do
  status="$(cat "$SCRATCH/$name.status" 2>/dev/null || echo '?')"
  logfile="$SCRATCH/$name.log"
  # libFuzzer's last words: "Done 123456 runs in 20 second(s)".
  done_line="$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$logfile" | tail -1 || true)"
  seeds="$(find "$ROOT/tests/fuzz/corpus/${name%_fuzz}" -type f | wc -l)"
  corpus="$(find "$SCRATCH/$name" -type f | wc -l)"
  if [ "$status" = 0 ] && [ -n "$done_line" ]; then
    runs="$(awk '{print $2}' <<<"$done_line")"
    secs="$(awk '{print $5}' <<<"$done_line")"
    cov="$(grep -oE 'cov: [0-9]+' "$logfile" | tail -1 | awk '{print $2}')"
    log "$(printf '%-14s %9s executions in %s s (%s/s), coverage %s edges, corpus %s -> %s inputs' \
      "$name" "$runs" "$secs" "$((runs / (secs > 0 ? secs : 1)))" "${cov:-?}" "$seeds" "$corpus")"
  else
    failed+=("$name")
    echo "----- $name failed (exit $status); the end of its output:" >&2
    grep -vE '^"|^#[0-9]+.*(NEW|REDUCE|pulse)' "$logfile" | tail -60 >&2
    ls "$ARTIFACTS/$name-"* 2>/dev/null | sed 's/^/reproducer: /' >&2 || true
  fi
done
phase "fuzzing"
log "total $((SECONDS - started)) s"
[ "${#failed[@]}" = 0 ] || die "FAILED: ${failed[*]} (test log: $ctest_log; reproducers: $ARTIFACTS)"
log "passed"
