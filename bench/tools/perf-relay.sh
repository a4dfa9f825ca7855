#!/usr/bin/env bash
# The relay under `perf record -g` for bench/run.sh's OUTBOX_BENCH_PROFILE: `run` is recorded into
# $OUTBOX_PERF_DIR/<config name>.perf.data, with DWARF call graphs (the -O2 -g build keeps no frame pointers); other
# commands run as they are.
# SIGTERM and SIGINT go to the relay, whose exit code is this script's.
set -u
[ "${1:-}" = run ] || exec "$OUTBOX_PERF_RELAY" "$@"
cfg=""
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = "-c" ]; then j=$((i + 1)); cfg="${!j}"; fi
done
name="$(basename "${cfg%.yaml}")"
perf record -q -F 997 --call-graph dwarf,8192 -o "$OUTBOX_PERF_DIR/$name.perf.data" -- "$OUTBOX_PERF_RELAY" "$@" &
pid=$!
trap 'kill -TERM $(pgrep -P $pid) 2>/dev/null' TERM INT
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done
exit "${rc:-1}"
