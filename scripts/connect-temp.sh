#!/usr/bin/env bash
# A throwaway Kafka Connect worker (standalone mode, started with no connector) with Debezium's Postgres connector on
# its plugin path, for the Debezium side-by-side tests (tests/config/debezium): each test adds its connector through
# the REST API and deletes it when done, so that the JVM starts and scans its plugins once per run, not once per test.
#
#   scripts/connect-temp.sh start DIR BOOTSTRAP   start in the background, wait until its REST API lists Debezium's
#                                                 connector, print CONNECT_URL=http://127.0.0.1:<port>
#   scripts/connect-temp.sh stop DIR              SIGTERM, wait 30 s, then SIGKILL
#
# Jars come from $DEBEZIUM_CONNECT_LIB (Kafka Connect), $DEBEZIUM_HOME/plugins and $OPENTELEMETRY_LIB (OpenTelemetry's
# SDK, so that Debezium traces as it does with OpenTelemetry) (bench/bench-versions.sh, filled by
# bench/install-bench-deps.sh). Files in DIR: worker.properties, connect.log (the JVM's output, log4j at INFO: what
# each task did, and a thread dump after SIGQUIT), connect.pid, port, connect.offsets (the source offsets, by
# connector name). Environment:
#   CONNECT_TEMP_OWNER_PID        a watchdog SIGKILLs the worker when that process is gone (for test fixtures)
#   CONNECT_TEMP_START_TIMEOUT_S  default 180
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/versions.sh
source "$HERE/versions.sh"
# shellcheck source=bench/bench-versions.sh
source "$HERE/../bench/bench-versions.sh"
# shellcheck source=scripts/lib.sh
source "$HERE/lib.sh"  # free_port, kill_with_owner

START_TIMEOUT_S="${CONNECT_TEMP_START_TIMEOUT_S:-180}"
JAVA="${JAVA:-java}"

die() { echo "connect-temp: $*" >&2; exit 1; }
usage() { sed -n '6,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

worker_pid() { [ -f "$DIR/connect.pid" ] && cat "$DIR/connect.pid"; }

running() {
  local pid; pid="$(worker_pid 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  # Guard against pid reuse: the process must be our JVM.
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-Dconnect.temp.dir=$DIR "
}

# Launches the JVM on `port` and waits until the REST API lists the Postgres connector among its plugins.
# Returns 0 when serving, 3 when the port was taken, 1 on another failure.
launch() {
  local port="$1" bootstrap="$2" pid logsize=0
  cat > "$DIR/worker.properties" <<EOF
# written by scripts/connect-temp.sh on every start
bootstrap.servers=$bootstrap
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=$DIR/connect.offsets
offset.flush.interval.ms=500
plugin.path=$DEBEZIUM_HOME/plugins
listeners=http://127.0.0.1:$port
EOF
  [ -f "$DIR/connect.log" ] && logsize="$(stat -c %s "$DIR/connect.log")"
  # OpenTelemetry's SDK on the class path, configured from system properties when Debezium first asks for it
  # (GlobalOpenTelemetry.get()): W3C trace context (its default propagators); spans go to the log (the logging
  # exporter), as a deployment's go to its collector.
  # setsid: its own session; in a non-interactive shell it execs without forking, so $! is the JVM's pid.
  setsid "$JAVA" -Xms128m -Xmx512m -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true -Dconnect.temp.dir="$DIR" \
    -Dorg.apache.logging.log4j.level=INFO -cp "$DEBEZIUM_CONNECT_LIB/*:$OPENTELEMETRY_LIB/*" \
    -Dotel.java.global-autoconfigure.enabled=true -Dotel.traces.exporter=logging -Dotel.metrics.exporter=none \
    -Dotel.logs.exporter=none \
    org.apache.kafka.connect.cli.ConnectStandalone "$DIR/worker.properties" </dev/null >>"$DIR/connect.log" 2>&1 &
  pid=$!
  echo "$pid" > "$DIR/connect.pid"
  local deadline=$((SECONDS + START_TIMEOUT_S))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      if tail -c +"$((logsize + 1))" "$DIR/connect.log" | grep -q -e "BindException" -e "Address already in use"; then
        return 3
      fi
      tail -c +"$((logsize + 1))" "$DIR/connect.log" | tail -30 >&2
      echo "connect-temp: the worker exited during start (log: $DIR/connect.log)" >&2
      return 1
    fi
    if curl -sf "http://127.0.0.1:$port/connector-plugins" 2>/dev/null | grep -q PostgresConnector; then return 0; fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      kill -KILL "$pid" 2>/dev/null || true
      tail -c +"$((logsize + 1))" "$DIR/connect.log" | tail -30 >&2
      echo "connect-temp: the worker did not serve in ${START_TIMEOUT_S}s (log: $DIR/connect.log)" >&2
      return 1
    fi
    sleep 0.2
  done
}

cmd_start() {
  local bootstrap="${1:-}" port attempt rc
  [ -n "$bootstrap" ] || usage
  [ -d "$DEBEZIUM_CONNECT_LIB" ] && [ -d "$DEBEZIUM_HOME/plugins/debezium-connector-postgres" ] &&
    [ -d "$OPENTELEMETRY_LIB" ] ||
    die "no Kafka Connect or Debezium jars: run bench/install-bench-deps.sh"
  if running; then echo "CONNECT_URL=http://127.0.0.1:$(cat "$DIR/port")"; return 0; fi
  for attempt in 1 2 3; do
    port="$(free_port)"
    rc=0
    launch "$port" "$bootstrap" || rc=$?
    if [ "$rc" = 0 ]; then
      echo "$port" > "$DIR/port"
      kill_with_owner "${CONNECT_TEMP_OWNER_PID:-}" "$(worker_pid)" connect-temp-watchdog
      echo "CONNECT_URL=http://127.0.0.1:$port"
      return 0
    fi
    [ "$rc" = 3 ] || exit 1
    echo "connect-temp: port $port was taken meanwhile (attempt $attempt), trying another" >&2
  done
  die "no free port after 3 attempts"
}

cmd_stop() {
  running || { rm -f "$DIR/connect.pid"; return 0; }
  local pid i; pid="$(worker_pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$DIR/connect.pid"; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$DIR/connect.pid"
}

[ $# -ge 2 ] || usage
cmd="$1"
mkdir -p "$2"
DIR="$(cd "$2" && pwd)"
shift 2
case "$cmd" in
  start) cmd_start "$@" ;;
  stop) cmd_stop ;;
  *) usage ;;
esac
