#!/usr/bin/env bash
# Instructions per event: outbox-relay under valgrind --tool=callgrind --separate-threads=yes, draining the same WAL
# into librdkafka's mock cluster (`bench-kafka mock`, its own process). Instruction counts move far less with the
# machine's load than wall-clock rates, so two builds can be compared on a busy 2-core machine.
#
#   bench/callgrind.sh [--events N] [--reps R] [--set KEY=VALUE]... [--timeout S] [--keep] BINARY [BINARY2]
#
# Per workload (N events, default 20000, at 1 and at 100 events per transaction; bench/bench.sql's ~300-byte jsonb
# payloads): one throwaway PostgreSQL (scripts/pg-temp.sh) and one mock cluster; R slots per binary (default 1)
# created in one statement before the load, so every drain reads identical WAL; the load; then one more slot per
# binary at the load's end, followed by one commit that publishes nothing (the 0-event drain). Each slot is drained
# by `BINARY run -c CONFIG` under callgrind, one at a time, binaries alternating, until the slot's
# confirmed_flush_lsn reaches the end LSN (polled; deadline --timeout, default 900 s), then SIGTERM: the relay
# must exit 0 and its topics must hold exactly the events. Prints per binary and workload the Ir of all threads and
# of the relay's loop thread (the one running Relay::Run) per event, net of the 0-event drain, the raw figures,
# the producer's batches, and with two binaries the ratio BINARY2/BINARY. With R > 1: medians, and the range.
# --set is passed to the relay's init and run (a config override, e.g. --set kafka.linger.ms=1000). Exits non-zero
# on any failure. --keep keeps the work directory (logs, callgrind files).
# Needs valgrind and bench-kafka (~/.cache/outbox-relay/bench-build/, built here when missing, as bench/run.sh does).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
source "$ROOT/scripts/versions.sh"

EVENTS=20000
REPS=1
TIMEOUT=900
KEEP=0
SETS=()
# The loop thread is the one whose callgrind file holds this function (thread numbers depend on start-up races).
LOOP_FN="${CALLGRIND_LOOP_FN:-outbox::app::Relay::Run()}"
# One call per batch (message set) the producer sends. Batches close on time (linger.ms), so their number depends on
# how fast the relay ran under callgrind, and each costs ~120k Ir in librdkafka's broker thread (mostly memset of a
# calloc and an LZ4 stream per batch): the main source of the run-to-run noise of the all-threads figure.
BATCH_FN=rd_kafka_msgset_create_ProduceRequest
usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --set) SETS+=(--set "$2"); shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) usage ;;
    -*) echo "callgrind: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] && [ $# -le 2 ] || usage
for v in EVENTS REPS TIMEOUT; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "callgrind: --${v,,} must be a positive integer" >&2; exit 2; }
done
BINS=()
for b in "$@"; do
  [ -x "$b" ] || { echo "callgrind: $b is not an executable" >&2; exit 2; }
  BINS+=("$(readlink -f "$b")")
done
command -v valgrind >/dev/null || { echo "callgrind: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

BK="$CACHE_ROOT/bench-build/bench-kafka"
if [ ! -x "$BK" ] || [ "$HERE/tools/bench_kafka.cc" -nt "$BK" ]; then
  [ -f "$RDKAFKA_PREFIX/.built-$RDKAFKA_VERSION" ] || { echo "callgrind: run scripts/install-deps.sh first" >&2; exit 2; }
  mkdir -p "$(dirname "$BK")"
  g++ -O2 -std=c++17 -Wall -Wextra "$HERE/tools/bench_kafka.cc" -isystem "$RDKAFKA_PREFIX/include" \
      -L"$RDKAFKA_PREFIX/lib" -lrdkafka -Wl,-rpath,"$RDKAFKA_PREFIX/lib" -o "$BK"
fi

W="$(mktemp -d /tmp/outbox-callgrind.XXXXXX)"
chmod 755 "$W"  # the server may run as another user (scripts/pg-temp.sh)
pids=()
pgdirs=()
cleanup() {
  set +e
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for d in "${pgdirs[@]}"; do bash "$ROOT/scripts/pg-temp.sh" stop "$d" >/dev/null 2>&1; done
  if [ "$KEEP" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "callgrind: FAILED: $*" >&2; exit 1; }
forget() { local p keep=(); for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done; pids=("${keep[@]}"); }
say() { echo "[callgrind $(printf '%5d' "$SECONDS")s] $*"; }
q() { command psql -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres -d bench "$@"; }
wal_pos() { q -c "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint"; }
confirmed() {
  q -c "SELECT coalesce(pg_wal_lsn_diff(confirmed_flush_lsn, '0/0')::bigint, 0) FROM pg_replication_slots
        WHERE slot_name = '$1'"
}
create_slots() {  # NAME... ; prints the highest start LSN
  local list; list="$(IFS=,; echo "$*")"
  q -c "SELECT max(pg_wal_lsn_diff((pg_create_logical_replication_slot(s, 'pgoutput')).lsn, '0/0'))::bigint
        FROM unnest(string_to_array('$list', ',')) s"
}
lsn() { printf '%X/%X' $(($1 >> 32)) $(($1 & 0xFFFFFFFF)); }
TYPES=(OrderCreated OrderPaid OrderShipped OrderDelivered)
topics() { local t; for t in "${TYPES[@]}"; do echo "cg.$1.$t"; done; }
ir_of() { awk '/^totals:/ {t = $2} END {print t + 0}' "$1"; }  # Ir of one thread's callgrind file
calls_of() {  # FUNCTION FILE...: calls to it (callgrind's compressed names: "(id) name" once, then "(id)")
  cat "${@:2}" | awk -v name="$1" '
    /^c?fn=\([0-9]+\) / { sp = index($0, " "); op = index($0, "(")
                           if (substr($0, sp + 1) == name) id = substr($0, op + 1, sp - op - 2) }
    /^cfn=/ { cur = (id != "" && index($0, "cfn=(" id ")") == 1); next }
    /^calls=/ { if (cur) { split($1, a, "="); s += a[2] } cur = 0 }
    END { print s + 0 }'
}

# drain LABEL BINARY SLOT END_LSN EXPECTED_EVENTS: one callgrind run; sets IR_ALL, IR_LOOP, BATCHES, SECS.
drain() {
  local label="$1" bin="$2" slot="$3" end="$4" expect="$5"
  local cfg="$W/$label.yaml"
  cat > "$cfg" <<EOF
source:
  conninfo: "host=127.0.0.1 port=$PGPORT dbname=bench user=postgres"
  slot: $slot
  publication: bench_pub
  checkpoint_topic: "cg.$slot.checkpoints"
outbox:
  table: public.outbox
  route:
    topic: "cg.$slot.\${routedByValue}"
kafka:
  bootstrap.servers: "$BOOT"
http:
  listen: "127.0.0.1:0"
EOF
  "$bin" init -c "$cfg" "${SETS[@]}" > "$W/$label.init.log" 2>&1 || { cat "$W/$label.init.log" >&2; die "$label: init failed"; }
  local t0=$EPOCHREALTIME
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$W/$label.cg" --log-file="$W/$label.vg.log" \
    "$bin" run -c "$cfg" "${SETS[@]}" > "$W/$label.log" 2>&1 &
  local rp=$! c=0 rc=0
  pids+=("$rp")
  local deadline=$((SECONDS + TIMEOUT))
  while :; do
    c="$(confirmed "$slot")"
    [ "${c:-0}" -ge "$end" ] && break
    if ! kill -0 "$rp" 2>/dev/null; then
      wait "$rp" || rc=$?
      tail -20 "$W/$label.log" >&2
      die "$label: the relay exited $rc before confirming $(lsn "$end") (at $(lsn "${c:-0}"))"
    fi
    [ "$SECONDS" -lt "$deadline" ] ||
      { tail -20 "$W/$label.log" >&2; die "$label: not drained to $(lsn "$end") in ${TIMEOUT}s (at $(lsn "${c:-0}"))"; }
    sleep 0.2
  done
  SECS="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"
  kill -TERM "$rp"
  deadline=$((SECONDS + 300))
  while kill -0 "$rp" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then kill -KILL "$rp"; die "$label: no exit within 300 s of SIGTERM"; fi
    sleep 0.2
  done
  wait "$rp" || rc=$?
  forget "$rp"
  [ "$rc" = 0 ] || { tail -20 "$W/$label.log" >&2; die "$label: the relay exited $rc on SIGTERM"; }
  local got
  got="$("$BK" counts --bootstrap "$BOOT" $(topics "$slot") | awk '{s += $3} END {print s + 0}')"
  [ "$got" = "$expect" ] || die "$label: the topics hold $got records, expected $expect"
  local f loop="" n=0 collected
  IR_ALL=0
  for f in "$W/$label.cg"-*; do
    IR_ALL=$((IR_ALL + $(ir_of "$f")))
    n=$((n + 1))
    if grep -qF -- "$LOOP_FN" "$f"; then
      [ -z "$loop" ] || die "$label: $LOOP_FN in two thread files ($loop, $f)"
      loop="$f"
    fi
  done
  [ -n "$loop" ] || die "$label: no thread file holds $LOOP_FN (set CALLGRIND_LOOP_FN)"
  collected="$(sed -n 's/^==[0-9]*== Collected : //p' "$W/$label.vg.log")"
  [ "$collected" = "$IR_ALL" ] || die "$label: the threads' Ir add up to $IR_ALL, callgrind collected $collected"
  IR_LOOP="$(ir_of "$loop")"
  BATCHES="$(calls_of "$BATCH_FN" "$W/$label.cg"-*)"
  say "  $label: $expect events in ${SECS}s, $n threads, Ir $IR_ALL, loop thread (${loop##*-}) $IR_LOOP," \
      "$BATCHES batches"
  [ "$KEEP" = 1 ] || rm -f "$W/$label.cg"*
}

declare -A R  # R[workload,binary,rep,what]; rep 0 = the 0-event drain
workload() {  # NAME PER_TX FIRST (the binary that drains first, 0 or 1)
  local w="$1" per_tx="$2" first="$3" i r s t
  local pgdir="$W/pg-$w"
  pgdirs+=("$pgdir")
  eval "$(bash "$ROOT/scripts/pg-temp.sh" start "$pgdir" | grep '^PGPORT=')"
  command createdb -h 127.0.0.1 -p "$PGPORT" -U postgres bench
  # Statement by statement (psql -f): sql/outbox_table.sql ends with a BEGIN ... ROLLBACK example.
  q -f "$ROOT/sql/outbox_table.sql"
  q -f "$HERE/bench.sql"
  q -c "CREATE TABLE cg_pad (x int)"  # not in the publication
  local slots=() zslots=() mock_topics=()
  for i in "${!BINS[@]}"; do
    for r in $(seq "$REPS"); do slots+=("cg_${w}_b$((i + 1))_r$r"); done
    zslots+=("cg_${w}_b$((i + 1))_zero")
  done
  for s in "${slots[@]}" "${zslots[@]}"; do
    mock_topics+=(--topic "cg.$s.checkpoints:1")
    for t in $(topics "$s"); do mock_topics+=(--topic "$t:3"); done
  done
  "$BK" mock "${mock_topics[@]}" > "$W/mock-$w.out" 2> "$W/mock-$w.err" &
  local mp=$!
  pids+=("$mp")
  local deadline=$((SECONDS + 30))
  until grep -q '^BOOTSTRAP=' "$W/mock-$w.out"; do
    kill -0 "$mp" 2>/dev/null || { cat "$W/mock-$w.err" >&2; die "bench-kafka mock exited"; }
    [ "$SECONDS" -lt "$deadline" ] || die "bench-kafka mock printed no BOOTSTRAP= in 30 s"
    sleep 0.1
  done
  BOOT="$(sed -n 's/^BOOTSTRAP=//p' "$W/mock-$w.out")"
  say "workload $w: $EVENTS events, $per_tx per transaction (PostgreSQL on $PGPORT, mock cluster $BOOT)"
  local start end end0
  start="$(create_slots "${slots[@]}")"
  q -c "CALL bench_load($EVENTS, $per_tx)"
  end="$(wal_pos)"
  # The 0-event drain: slots at the load's end, then one commit that publishes nothing, which the relay confirms
  # through its idle advance after writing its checkpoint: the same start, checkpoint, confirmation and stop as a
  # drain of the load, without the events.
  create_slots "${zslots[@]}" >/dev/null
  q -c "INSERT INTO cg_pad VALUES (1)"
  end0="$(wal_pos)"
  say "  slots at $(lsn "$start"), the load ends at $(lsn "$end") ($(( (end - start) / 1024 )) KiB of WAL);" \
      "0-event end $(lsn "$end0")"
  local order=("${!BINS[@]}")
  [ ${#BINS[@]} = 1 ] || [ "$first" = 0 ] || order=(1 0)
  for r in $(seq "$REPS"); do
    for i in "${order[@]}"; do
      drain "${w}_b$((i + 1))_r$r" "${BINS[$i]}" "cg_${w}_b$((i + 1))_r$r" "$end" "$EVENTS"
      R[$w,$i,$r,all]=$IR_ALL; R[$w,$i,$r,loop]=$IR_LOOP; R[$w,$i,$r,batches]=$BATCHES; R[$w,$i,$r,secs]=$SECS
    done
    # Neither binary always goes first: the order flips every repetition and between the workloads.
    [ ${#BINS[@]} = 1 ] || order=("${order[1]}" "${order[0]}")
  done
  for i in "${order[@]}"; do
    drain "${w}_b$((i + 1))_zero" "${BINS[$i]}" "cg_${w}_b$((i + 1))_zero" "$end0" 0
    R[$w,$i,0,all]=$IR_ALL; R[$w,$i,0,loop]=$IR_LOOP
  done
  kill -TERM "$mp"; wait "$mp" || true
  forget "$mp"
  bash "$ROOT/scripts/pg-temp.sh" stop "$pgdir" >/dev/null
}

for i in "${!BINS[@]}"; do say "binary $((i + 1)): ${BINS[$i]} ($("${BINS[$i]}" version 2>&1 | head -1))"; done
workload w1 1 0
workload w100 100 1

# The figures. med: the median of its arguments; cell: the median, and with repetitions the range.
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
cell() {
  local m; m="$(med "$@")"
  if [ $# = 1 ]; then printf '%.0f' "$m"
  else printf '%.0f [%.0f..%.0f]' "$m" "$(printf '%s\n' "$@" | sort -g | head -1)" "$(printf '%s\n' "$@" | sort -g | tail -1)"; fi
}
declare -A NET  # NET[workload,binary,all|loop]: the median net Ir per event
per_event() {  # WORKLOAD BINARY WHAT NET(1|0): the per-event figures of every repetition
  local r base=0
  [ "$4" = 1 ] && base="${R[$1,$2,0,$3]}"
  for r in $(seq "$REPS"); do awk -v a="${R[$1,$2,$r,$3]}" -v b="$base" -v n="$EVENTS" 'BEGIN {print (a - b) / n}'; done
}
echo
echo "Ir per event: valgrind --tool=callgrind --separate-threads=yes, $EVENTS events per workload, into the mock cluster."
echo "  net = (Ir of the N-event drain - Ir of the same binary's 0-event drain in the same workload) / N. The 0-event"
echo "        drain (a slot at the load's end, then one commit that publishes nothing) starts, reads and writes its"
echo "        checkpoint, confirms and stops like the N-event drain, so its Ir is the fixed start-up and stop cost."
echo "  raw = Ir of the N-event drain / N.   all = every thread;   loop = the thread running Relay::Run."
echo "  ev/batch = events per batch (message set) the producer sent (calls of $BATCH_FN)."
[ "$REPS" = 1 ] || echo "  $REPS repetitions: median [min..max]."
echo
hdr=(workload binary "net all/ev" "net loop/ev" "0-ev all M" "0-ev loop M" "raw all/ev" "raw loop/ev" ev/batch "wall s")
row() { printf '| %s ' "$@"; echo '|'; }
row "${hdr[@]}"
row $(for h in "${hdr[@]}"; do echo ---; done)
for w in w1 w100; do
  for i in "${!BINS[@]}"; do
    na=($(per_event $w $i all 1)); nl=($(per_event $w $i loop 1)); ra=($(per_event $w $i all 0)); rl=($(per_event $w $i loop 0))
    b=(); s=()
    for r in $(seq "$REPS"); do b+=("$(awk -v n="$EVENTS" -v c="${R[$w,$i,$r,batches]}" 'BEGIN {print c ? n / c : 0}')"); s+=("${R[$w,$i,$r,secs]}"); done
    NET[$w,$i,all]="$(med "${na[@]}")"; NET[$w,$i,loop]="$(med "${nl[@]}")"
    NET[$w,$i,rawall]="$(med "${ra[@]}")"; NET[$w,$i,rawloop]="$(med "${rl[@]}")"
    row "$w ($([ $w = w1 ] && echo 1 || echo 100)/tx)" "$((i + 1))" "$(cell "${na[@]}")" "$(cell "${nl[@]}")" \
      "$(awk -v a="${R[$w,$i,0,all]}" 'BEGIN {printf "%.1f", a / 1e6}')" \
      "$(awk -v a="${R[$w,$i,0,loop]}" 'BEGIN {printf "%.1f", a / 1e6}')" \
      "$(cell "${ra[@]}")" "$(cell "${rl[@]}")" "$(awk -v m="$(med "${b[@]}")" 'BEGIN {printf "%.1f", m}')" "$(med "${s[@]}")"
  done
done
if [ ${#BINS[@]} = 2 ]; then
  echo
  echo "binary 2 / binary 1, net per event$([ "$REPS" = 1 ] || echo " (medians)") (raw in brackets):"
  for w in w1 w100; do
    for k in all loop; do
      raw="raw$k"
      echo "  $w $k: $(awk -v a="${NET[$w,1,$k]}" -v b="${NET[$w,0,$k]}" 'BEGIN {printf "%.4f", a / b}')" \
           "($(awk -v a="${NET[$w,1,$raw]}" -v b="${NET[$w,0,$raw]}" 'BEGIN {printf "%.4f", a / b}'))"
    done
  done
fi
