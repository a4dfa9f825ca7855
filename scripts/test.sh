#!/usr/bin/env bash
# The README's test command (and what .ci/run calls): installs what is missing, builds with -Werror, then runs
# the whole test suite (unit, integration, e2e) with ctest. One PostgreSQL, one Kafka broker, one nats-server
# (JetStream) and one rabbitmq-server node are started for
# the run and shared by the tests that do not restart them (each test owns its own database, slot and topics);
# tests that stop or restart a server start their own.
#
# Then the version-matrix step: scripts/test-matrix.sh 17 and 18 build PostgreSQL 17 and 18 (once, cached) and run
# a subset of the e2e suite against each, with the failover tests, and scripts/test-matrix.sh kafka-3.9.1 runs the
# Kafka-facing subset against the 3.9 broker line (KAFKA_MATRIX_VERSION). It is skipped with OUTBOX_SKIP_MATRIX=1,
# or when ctest arguments select tests.
#
#   scripts/test.sh [ctest arguments, e.g. -L unit or -R Relay]
#   OUTBOX_SOAK=1 scripts/test.sh     also the long chaos/soak forms
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
source "$HERE/versions.sh"
source "$HERE/lib.sh"

bash "$HERE/install-deps.sh"

BUILD="${OUTBOX_BUILD_DIR:-$ROOT/build}"
use_compiler_cache "$ROOT"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOUTBOX_WERROR=ON "${COMPILER_CACHE_ARGS[@]}" \
  >/dev/null
build_start=$SECONDS
[ ${#COMPILER_CACHE_ARGS[@]} = 0 ] || ccache -z >/dev/null
ninja -C "$BUILD"
echo "build took $((SECONDS - build_start)) s${COMPILER_CACHE_ARGS:+ (through ccache: $(ccache -s 2>/dev/null | grep -m1 -i 'hits' | tr -s ' '))}"

WORK="$(mktemp -d /tmp/outbox-test.XXXXXX)"
chmod 755 "$WORK"
cleanup() {
  set +e
  bash "$HERE/connect-temp.sh" stop "$WORK/connect" >/dev/null 2>&1
  bash "$HERE/kafka-temp.sh" stop "$WORK/kafka" >/dev/null 2>&1
  bash "$HERE/nats-temp.sh" stop "$WORK/nats" >/dev/null 2>&1
  bash "$HERE/rabbitmq-temp.sh" stop "$WORK/rabbitmq" >/dev/null 2>&1
  bash "$HERE/pg-temp.sh" stop "$WORK/pg" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

eval "$(bash "$HERE/pg-temp.sh" start "$WORK/pg" | grep '^PGPORT=')"
eval "$(bash "$HERE/kafka-temp.sh" start "$WORK/kafka" | grep '^KAFKA_BOOTSTRAP=')"
export OUTBOX_TEST_PG_PORT="$PGPORT"
eval "$(bash "$HERE/nats-temp.sh" start "$WORK/nats" | grep '^NATS_URL=')"
export OUTBOX_TEST_KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP"
export OUTBOX_TEST_NATS_URL="$NATS_URL" OUTBOX_TEST_NATS_PY="$NATS_PY_VENV/bin/python"
eval "$(bash "$HERE/rabbitmq-temp.sh" start "$WORK/rabbitmq" | grep '^RABBITMQ_URL=')"
export OUTBOX_TEST_RABBITMQ_URL="$RABBITMQ_URL" OUTBOX_TEST_PIKA_PY="$PIKA_VENV/bin/python"
echo "shared services: PostgreSQL on $PGPORT, Kafka on $KAFKA_BOOTSTRAP, NATS on $NATS_URL, RabbitMQ on $RABBITMQ_URL"

# Debezium's connector (cached; from Maven Central) for the side-by-side tests, which then may not skip, and one
# Kafka Connect worker they all add their connectors to (scripts/connect-temp.sh).
if [ "${OUTBOX_SKIP_DEBEZIUM:-0}" != 1 ]; then
  bash "$ROOT/bench/install-bench-deps.sh"
  export OUTBOX_REQUIRE_DEBEZIUM=1
fi
[ "${OUTBOX_SKIP_FUZZ:-0}" = 1 ] || bash "$HERE/sanitize-and-fuzz.sh" "${OUTBOX_FUZZ_SECONDS:-20}"
# The benchmark harness in its CI form (about a minute; asserts only that every contender drains, that each server
# holds every event, read back, and that the report is written).
[ "${OUTBOX_SKIP_BENCH:-0}" = 1 ] || bash "$ROOT/bench/run.sh" --quick
# The long chaos and soak forms (CI runs the short ones).
if [ "${OUTBOX_SOAK:-0}" = 1 ]; then
  export OUTBOX_CHAOS_CYCLES="${OUTBOX_CHAOS_CYCLES:-200}" OUTBOX_OUTAGE_SECONDS="${OUTBOX_OUTAGE_SECONDS:-60}" \
         OUTBOX_PG_CRASH_CYCLES="${OUTBOX_PG_CRASH_CYCLES:-20}"
fi

# The side-by-side tests' Kafka Connect, started now that the benchmark is done (an idle JVM, about 300 MB).
if [ "${OUTBOX_SKIP_DEBEZIUM:-0}" != 1 ]; then
  bash "$HERE/connect-temp.sh" start "$WORK/connect" "$KAFKA_BOOTSTRAP" >/dev/null
  export OUTBOX_TEST_CONNECT_DIR="$WORK/connect"
fi

# Each failed step's ctest log is kept; at the end their failure messages are printed last (scripts/ctest-digest.py),
# where a CI summary that shows only the tail of the output still says what failed and why.
rc=0
failed_logs=()
step() {
  local name="$1" step_rc=0
  shift
  touch "$WORK/step-start"
  "$@" || step_rc=$?
  if [ "$step_rc" != 0 ]; then
    rc="$step_rc"
    local log="$BUILD/Testing/Temporary/LastTest.log"
    if [ -f "$log" ] && [ "$log" -nt "$WORK/step-start" ]; then
      cp "$log" "$WORK/failed-$name.log"
      failed_logs+=("$WORK/failed-$name.log")
    fi
  fi
}
step main bash -c 'cd "$1" && shift && ctest --output-on-failure --timeout 900 -j2 "$@"' _ "$BUILD" "$@"
if [ "${OUTBOX_SKIP_MATRIX:-0}" != 1 ] && [ $# -eq 0 ]; then
  step pg17 bash "$HERE/test-matrix.sh" 17
  step pg18 bash "$HERE/test-matrix.sh" 18
  step "kafka-$KAFKA_MATRIX_VERSION" bash "$HERE/test-matrix.sh" "kafka-$KAFKA_MATRIX_VERSION"
fi
if [ "$rc" != 0 ] && [ ${#failed_logs[@]} -gt 0 ]; then
  echo "==== what failed (the failure messages of each failed test; the full output is above)"
  python3 "$HERE/ctest-digest.py" "${failed_logs[@]}"
fi
exit "$rc"
