#!/usr/bin/env bash
# Where the relay's time goes: drains N events (1 per transaction) with outbox-relay under `perf record -g`
# (or valgrind --tool=callgrind with --callgrind), into librdkafka's mock cluster (default) or the real broker
# (--kafka), and prints the top functions by self time and by inclusive time, plus the wall-clock split
# (start → streaming → all acked → confirmed) and the syscall counts (strace -c, a second run, when present).
#
#   bench/profile.sh [--kafka] [--events N] [--callgrind] [--keep]
# Needs the relay built (bench/run.sh builds it) and bench-kafka (~/.cache/outbox-relay/bench-build/).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
source "$ROOT/scripts/versions.sh"

EVENTS=200000
TARGET=mock
TOOL=perf
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --kafka) TARGET=kafka; shift ;;
    --events) EVENTS="$2"; shift 2 ;;
    --callgrind) TOOL=callgrind; shift ;;
    --keep) KEEP=1; shift ;;
    *) echo "profile: unknown option $1" >&2; exit 2 ;;
  esac
done
RELAY="${OUTBOX_BUILD_DIR:-$ROOT/build}/src/app/outbox-relay"
BK="$CACHE_ROOT/bench-build/bench-kafka"
[ -x "$RELAY" ] && [ -x "$BK" ] || { echo "profile: build first (bench/run.sh --quick)" >&2; exit 2; }

W="$(mktemp -d /tmp/outbox-profile.XXXXXX)"
chmod 755 "$W"
pids=()
cleanup() {
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  bash "$ROOT/scripts/kafka-temp.sh" stop "$W/kafka" >/dev/null 2>&1
  bash "$ROOT/scripts/pg-temp.sh" stop "$W/pg" >/dev/null 2>&1
  if [ "$KEEP" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT

eval "$(PG_TEMP_CONF=$'max_replication_slots=10' bash "$ROOT/scripts/pg-temp.sh" start "$W/pg" | grep '^PGPORT=')"
export PGHOST=127.0.0.1 PGPORT PGUSER=postgres
psql() { command psql -X -q -At -v ON_ERROR_STOP=1 -d bench "$@"; }
createdb bench
psql -f "$HERE/../sql/outbox_table.sql"
psql -f "$HERE/bench.sql"
psql -c "SELECT pg_create_logical_replication_slot('prof_' || i, 'pgoutput') FROM generate_series(1, 2) i" >/dev/null
psql -c "CALL bench_load($EVENTS, 1)"
END="$(psql -c "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint")"

if [ "$TARGET" = kafka ]; then
  eval "$(KAFKA_TEMP_PROPERTIES=$'log.message.timestamp.type=LogAppendTime' bash "$ROOT/scripts/kafka-temp.sh" start "$W/kafka" | grep '^KAFKA_BOOTSTRAP=')"
  BOOT="$KAFKA_BOOTSTRAP"
  "$BK" create-topics --bootstrap "$BOOT" --partitions 3 prof.OrderCreated prof.OrderPaid prof.OrderShipped prof.OrderDelivered
else
  "$BK" mock --topic outbox_relay.checkpoints:1 --topic prof.OrderCreated:3 --topic prof.OrderPaid:3 \
    --topic prof.OrderShipped:3 --topic prof.OrderDelivered:3 > "$W/mock.out" &
  pids+=($!)
  for _ in $(seq 50); do grep -q BOOTSTRAP= "$W/mock.out" && break; sleep 0.1; done
  BOOT="$(sed -n 's/^BOOTSTRAP=//p' "$W/mock.out")"
fi

run_one() {  # slot, wrapper...
  local slot="$1"; shift
  local port; port=$(( 20000 + RANDOM % 10000 ))
  cat > "$W/$slot.yaml" <<EOF
source:
  conninfo: "host=127.0.0.1 port=$PGPORT dbname=bench user=postgres"
  slot: $slot
  publication: bench_pub
outbox:
  table: public.outbox
  route:
    topic: "prof.\${routedByValue}"
kafka:
  bootstrap.servers: "$BOOT"
http:
  listen: "127.0.0.1:$port"
EOF
  "$RELAY" init -c "$W/$slot.yaml" >/dev/null
  local t0 t1 v pub tacked=""
  t0=$(date +%s.%N)
  "$@" "$RELAY" run -c "$W/$slot.yaml" > "$W/$slot.log" 2>&1 &
  local wp=$!
  while :; do
    m="$(curl -s "127.0.0.1:$port/metrics" || true)"
    v="$(awk '/^outbox_relay_confirmed_lsn[ {]/{printf "%d", $2}' <<<"$m")"
    pub="$(awk '/^outbox_relay_events_total\{.*result="published"\}/{printf "%d", $2}' <<<"$m")"
    if [ -z "$tacked" ] && [ "${pub:-0}" -ge "$EVENTS" ]; then tacked=$(date +%s.%N); fi
    [ "${v:-0}" -ge "$END" ] && break
    if [ "$(echo "$(date +%s.%N) - $t0 > 600" | bc)" = 1 ]; then
      echo "profile: $slot not confirmed to $END after 600 s (confirmed ${v:-none}, published ${pub:-none}); see $W/$slot.log" >&2
      exit 1
    fi
    sleep 0.05
  done
  t1=$(date +%s.%N)
  local rp; rp="$(pgrep -n -f "$RELAY run -c $W/$slot.yaml")"
  echo "$slot: $EVENTS events in $(echo "$t1 - $t0" | bc) s (all acked at $(echo "${tacked:-$t1} - $t0" | bc) s);" \
       "relay CPU user $(awk '{print $14/100}' "/proc/$rp/stat") s, sys $(awk '{print $15/100}' "/proc/$rp/stat") s"
  grep -E 'starting|streaming slot' "$W/$slot.log" | sed 's/^/  /' | cut -c1-140
  kill -TERM "$rp"
  wait "$wp" || true
}

echo "== relay → $TARGET, $EVENTS events at 1 per transaction, $TOOL"
if [ "$TOOL" = perf ]; then
  run_one prof_1 perf record -q -o "$W/perf.data" -F ${OUTBOX_PROFILE_HZ:-499} --call-graph dwarf,16384
  report() { perf report -i "$W/perf.data" --stdio "$@" 2>/dev/null | grep -E '^ +[0-9]' | cut -c1-160 || true; }
  echo "== by thread"
  report --no-children --sort comm | head -12
  echo "== by shared object"
  report --no-children --sort dso | head -12
  echo "== top functions, self time"
  report --no-children --sort symbol -g none | head -40
  echo "== top functions, inclusive (callers included)"
  report --children --sort symbol -g none | head -60
else
  run_one prof_1 valgrind --tool=callgrind --callgrind-out-file="$W/callgrind.out"
  callgrind_annotate --inclusive=no "$W/callgrind.out" 2>/dev/null | head -50 || true
  callgrind_annotate --inclusive=yes "$W/callgrind.out" 2>/dev/null | head -60 || true
fi
if command -v strace >/dev/null; then
  echo "== syscalls (strace -c -f, a second drain of the same WAL)"
  run_one prof_2 strace -c -f -o "$W/strace.txt"
  head -25 "$W/strace.txt" || true
fi
