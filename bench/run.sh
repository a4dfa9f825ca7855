#!/usr/bin/env bash
# The outbox-relay benchmark (DESIGN.md "Benchmarks"; bench/README.md): a throwaway PostgreSQL 15 and a real
# Kafka broker on this machine (and a RabbitMQ node, a NATS JetStream server, an HTTP receiver for the other sinks);
# pg_recvlogical (the limit), outbox-relay into the broker (at-least-once, and exactly_once: relay-eo), into
# librdkafka's mock cluster, into RabbitMQ, NATS and HTTP, and Debezium's Postgres connector with the Outbox Event
# Router on Kafka Connect (the peer), each draining its own slot of the same WAL. Writes bench/results/REPORT.md,
# chart.png and results.json.
#
#   bench/run.sh            the full run: 200,000 events at 1 and at 100 events per transaction, 3 repetitions,
#                           latency at 2,000 events/s for 60 s, the knob runs (the relay into the mock cluster under
#                           nine read settings), a backlog of 5,000,000 events caught up, then 1, 2, 4 and 8
#                           pipelines in one process with 100,000 events each (about 28 to 33 minutes)
#   bench/run.sh --quick    the CI form: 5,000 events, 1 repetition, no Debezium, 4 s of latency at 500/s; asserts
#                           only that every contender drains, that each server holds every event (read back), and
#                           that the report is written (into a temporary directory unless --out is given)
#   other options are passed to bench/bench.py (--out DIR, --reps N, --events-1 N, --events-100 N,
#   --contenders limit,discard,relay,relay-eo,relay-mock,relay-rabbitmq,relay-nats,relay-http,debezium, --latency-rate N,
#   --latency-seconds N, --transaction-interval-ms N (relay-eo's), --pipelines 1,2,4,8, --pipeline-events N,
#   --pipeline-per-tx N, --knob-events N, --knob-per-tx N, --knobs NAMES, --baseline-relay PATH, --backlog-events N,
#   --backlog-per-tx N, --broker-warm-events N, --keep)
#
# Environment: OUTBOX_BUILD_DIR (default build/), the relay is built there when missing or stale.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
source "$ROOT/scripts/versions.sh"
source "$HERE/bench-versions.sh"

quick=0
args=()
contenders=""
out=""
prev=""
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    --contenders=*) contenders="${a#--contenders=}"; args+=("$a") ;;
    --out=*) out="${a#--out=}"; args+=("$a") ;;
    *)
      args+=("$a")
      case "$prev" in
        --contenders) contenders="$a" ;;
        --out) out="$a" ;;
      esac
      ;;
  esac
  prev="$a"
done

t0=$SECONDS
say() { echo "==> $*"; }

say "dependencies"
bash "$ROOT/scripts/install-deps.sh"
# Debezium's connector only when it runs: the full run's default contenders include it, --quick never does.
if [ "$quick" = 1 ] || { [ -n "$contenders" ] && [[ ",$contenders," != *,debezium,* ]]; }; then
  bash "$HERE/install-bench-deps.sh" --no-debezium
else
  bash "$HERE/install-bench-deps.sh"
fi

say "building outbox-relay, bench-kafka and bench-http-receiver"
BUILD="${OUTBOX_BUILD_DIR:-$ROOT/build}"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$BUILD" outbox-relay >/dev/null
grep -q 'CMAKE_BUILD_TYPE:STRING=\(RelWithDebInfo\|Release\)' "$BUILD/CMakeCache.txt" ||
  echo "bench: warning: $BUILD is not an optimized build" >&2
RELAY="${OUTBOX_BENCH_RELAY_BIN:-$BUILD/src/app/outbox-relay}"  # another build of the relay to compare (same options)
# OUTBOX_BENCH_PROFILE=DIR: every `outbox-relay run` of the benchmark runs under perf record (bench/tools/perf-relay.sh),
# one perf.data per run in DIR; its timings are then not comparable (perf's own cost), its profiles are.
if [ -n "${OUTBOX_BENCH_PROFILE:-}" ]; then
  mkdir -p "$OUTBOX_BENCH_PROFILE"
  export OUTBOX_PERF_RELAY="$RELAY" OUTBOX_PERF_DIR="$OUTBOX_BENCH_PROFILE"
  RELAY="$HERE/tools/perf-relay.sh"
fi
BK_DIR="$CACHE_ROOT/bench-build"
mkdir -p "$BK_DIR"
if [ ! -x "$BK_DIR/bench-kafka" ] || [ "$HERE/tools/bench_kafka.cc" -nt "$BK_DIR/bench-kafka" ]; then
  g++ -O2 -std=c++17 -Wall -Wextra "$HERE/tools/bench_kafka.cc" -isystem "$RDKAFKA_PREFIX/include" \
      -L"$RDKAFKA_PREFIX/lib" -lrdkafka -Wl,-rpath,"$RDKAFKA_PREFIX/lib" -o "$BK_DIR/bench-kafka"
fi
if [ ! -x "$BK_DIR/bench-drain" ] || [ "$HERE/tools/bench_drain.cc" -nt "$BK_DIR/bench-drain" ]; then
  g++ -O2 -std=c++17 -Wall -Wextra "$HERE/tools/bench_drain.cc" -I"$(pg_config --includedir)" -lpq \
      -o "$BK_DIR/bench-drain"
fi
if [ ! -x "$BK_DIR/bench-http-receiver" ] || [ "$HERE/tools/bench_http_receiver.cc" -nt "$BK_DIR/bench-http-receiver" ]
then
  # shellcheck disable=SC2046  # pkg-config's words
  g++ -O2 -std=c++17 -Wall -Wextra "$HERE/tools/bench_http_receiver.cc" $(pkg-config --cflags --libs cpp-httplib) \
      -lpthread -o "$BK_DIR/bench-http-receiver"
fi

common=(--relay "$RELAY" --bench-kafka "$BK_DIR/bench-kafka" --kafka-lib "$DEBEZIUM_CONNECT_LIB" --kafka-version "$KAFKA_VERSION"
        --connect-version "$DEBEZIUM_CONNECT_VERSION"
        --debezium-plugin-dir "$DEBEZIUM_PLUGIN_DIR" --debezium-version "$DEBEZIUM_VERSION"
        --connect-java-home "$CONNECT_JAVA_HOME" --pika-py "$PIKA_VENV/bin/python" --nats-py "$NATS_PY_VENV/bin/python"
        --http-receiver "$BK_DIR/bench-http-receiver" --bench-drain "$BK_DIR/bench-drain")
if [ "$quick" = 1 ]; then
  keep_out=1
  [ -n "$out" ] || { out="$(mktemp -d /tmp/outbox-bench-quick.XXXXXX)"; keep_out=0; }
  say "quick benchmark (results in $out)"
  /usr/bin/python3 "$HERE/bench.py" "${common[@]}" --events-1 5000 --events-100 5000 --reps 1 \
    --contenders limit,discard,relay,relay-eo,relay-mock,relay-rabbitmq,relay-nats,relay-http --latency-rate 500 \
    --latency-seconds 4 --latency-rates 2000 --latency-extra-seconds 2 --pipelines 1,2 --pipeline-events 2000 --backlog-events 50000 --knob-events 5000 --settle-seconds 0.25 \
    --quiet-wait 0 --broker-warm-events 2000 --latency-warm-seconds 1 \
    --command "bench/run.sh --quick" "${args[@]}" --out "$out"
  test -s "$out/REPORT.md"
  test -s "$out/chart.png"
  # The first table under each workload's heading (rate, CPU, RSS per contender).
  awk '/^### /{print; t=1; next} t && /^\|/{print; s=1; next} s{t=0; s=0}' "$out/REPORT.md"
  if [ -z "$contenders" ] || [[ ",$contenders," == *,relay,* ]]; then
    grep -q '^## Catching up a backlog' "$out/REPORT.md"
    grep '^## Pipelines in one process' -A 12 "$out/REPORT.md" | awk '/^\|/{print}'
  fi
  if [ -z "$contenders" ] || [[ ",$contenders," == *,relay-mock,* ]]; then
    grep '^## What the walsender' -A 14 "$out/REPORT.md" | awk '/^\|/{print}'
  fi
  # relay-eo against relay (drain-rate ratio, visibility at read_committed) and issue 15's targets (not asserted).
  if [ -z "$contenders" ] || [[ ",$contenders," == *,relay-eo,* ]]; then
    grep -q '^## Exactly once' "$out/REPORT.md"
    grep '^| target (issue 15)' -A 10 "$out/REPORT.md" | awk '/^\|/{print; next} {exit}'
  fi
  [ "$keep_out" = 1 ] || rm -rf "$out"
  say "quick benchmark passed in $((SECONDS - t0)) s"
else
  say "full benchmark"
  /usr/bin/python3 "$HERE/bench.py" "${common[@]}" --out "$HERE/results" --command "$(echo bench/run.sh "${args[@]}")" \
    "${args[@]}"
  say "done in $(( (SECONDS - t0) / 60 )) min $(( (SECONDS - t0) % 60 )) s"
fi
