#!/usr/bin/env bash
# A throwaway single-node Kafka (KRaft, combined broker+controller) for tests, benchmarks and the README quickstart.
#
#   scripts/kafka-temp.sh start DIR [PORT]   format DIR (first time), start in the background, wait until it serves,
#                                            print KAFKA_BOOTSTRAP=127.0.0.1:<port>
#   scripts/kafka-temp.sh stop DIR           SIGTERM, wait (KAFKA_TEMP_STOP_TIMEOUT_S, 30 s), then SIGKILL
#   scripts/kafka-temp.sh kill DIR           SIGKILL (a crash; the next start recovers the logs)
#   scripts/kafka-temp.sh restart DIR        stop, then start on the same ports and data
#   scripts/kafka-temp.sh status DIR         exit 0 when running
#   scripts/kafka-temp.sh env DIR            print KAFKA_BOOTSTRAP=127.0.0.1:<port> (and KAFKA_SASL_BOOTSTRAP=...)
#
# Jars come from $KAFKA_LIB (scripts/versions.sh, filled by scripts/install-deps.sh). Without PORT, `start` re-uses
# the ports of an earlier start of DIR, or picks free ones (retrying with others if they were taken meanwhile).
# Files in DIR: server.properties, log4j2.properties, server.log (WARN, plus the start line), kafka.out (JVM
# stdout/stderr), kafka.pid, ports, data/. Environment:
#   KAFKA_TEMP_PROPERTIES   lines appended to server.properties (on every start), e.g. $'message.max.bytes=2000000'
#   KAFKA_TEMP_SASL         1: a second listener, SASL_PLAINTEXT with SCRAM-SHA-256 and SCRAM-SHA-512, on a port of
#                           its own (start and env then also print KAFKA_SASL_BOOTSTRAP=127.0.0.1:<port>). No user
#                           exists: create one with the Admin API (AlterUserScramCredentials) on the PLAINTEXT
#                           listener. No authorizer: an authenticated user may do anything.
#   KAFKA_TEMP_TLS          1: the second listener is SSL instead (server authentication only), with a throwaway CA
#                           and server certificate for 127.0.0.1 made by openssl in DIR/tls (scripts/lib.sh
#                           make_test_certs; PEM key store); start and env then print KAFKA_TLS_BOOTSTRAP=... and
#                           TLS_DIR=DIR/tls (ca.crt is the CA to trust).
#   KAFKA_TEMP_HEAP_OPTS    default "-Xms256m -Xmx512m"
#   KAFKA_TEMP_GC_OPTS      the collector and its options, default "-XX:+UseSerialGC" (small and quick for tests;
#                           the benchmark gives Kafka's own defaults, G1 with 20 ms pauses, and a GC log)
#   KAFKA_TEMP_LOG_LEVEL    server.log's level, default WARN
#   KAFKA_TEMP_START_TIMEOUT_S  default 90
#   KAFKA_TEMP_OWNER_PID    a watchdog SIGKILLs the broker when that process is gone (for test fixtures)
#   KAFKA_TEMP_CDS          1 (default): an AppCDS class archive in the cache dir, dumped at the first clean
#                           stop, makes later starts about 1 s faster; 0: none
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/versions.sh
source "$HERE/versions.sh"

START_TIMEOUT_S="${KAFKA_TEMP_START_TIMEOUT_S:-90}"
STOP_TIMEOUT_S="${KAFKA_TEMP_STOP_TIMEOUT_S:-30}"
HEAP_OPTS="${KAFKA_TEMP_HEAP_OPTS:--Xms256m -Xmx512m}"
GC_OPTS="${KAFKA_TEMP_GC_OPTS:--XX:+UseSerialGC}"
JAVA="${JAVA:-java}"

die() { echo "kafka-temp: $*" >&2; exit 1; }
usage() { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# shellcheck source=scripts/lib.sh
source "$HERE/lib.sh"  # free_port, make_test_certs, kill_with_owner

abs_dir() {
  if [ "$1" = start ]; then mkdir -p "$2"; fi
  if [ -d "$2" ]; then (cd "$2" && pwd); else echo "$(cd "$(dirname "$2")" 2>/dev/null && pwd || echo /nonexistent)/$(basename "$2")"; fi
}

kafka_pid() { [ -f "$DIR/kafka.pid" ] && cat "$DIR/kafka.pid"; }

running() {
  local pid; pid="$(kafka_pid 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  # Guard against pid reuse: the process must be our JVM.
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-Dkafka.temp.dir=$DIR "
}

java_cp() {
  [ -d "$KAFKA_LIB" ] && compgen -G "$KAFKA_LIB/kafka_2.13-*.jar" >/dev/null ||
    die "no Kafka jars in $KAFKA_LIB: run scripts/install-deps.sh"
  echo "$KAFKA_LIB/*"
}

# The second listener's protocol (KAFKA_TEMP_SASL or KAFKA_TEMP_TLS), kept in DIR/second for env and restarts.
second_protocol() {
  if [ -f "$DIR/second" ]; then cat "$DIR/second"; return 0; fi
  [ "${KAFKA_TEMP_SASL:-0}" != 1 ] || [ "${KAFKA_TEMP_TLS:-0}" != 1 ] || die "KAFKA_TEMP_SASL and KAFKA_TEMP_TLS: one of them"
  if [ "${KAFKA_TEMP_SASL:-0}" = 1 ]; then echo SASL_PLAINTEXT; elif [ "${KAFKA_TEMP_TLS:-0}" = 1 ]; then echo SSL; fi
}

write_config() {
  local bport="$1" cport="$2" sport="${3:-}" listeners advertised second
  listeners="PLAINTEXT://127.0.0.1:$bport,CONTROLLER://127.0.0.1:$cport"
  advertised="PLAINTEXT://127.0.0.1:$bport"
  second="$(second_protocol)"
  if [ -n "$sport" ]; then
    listeners="$listeners,$second://127.0.0.1:$sport"
    advertised="$advertised,$second://127.0.0.1:$sport"
  fi
  cat > "$DIR/server.properties" <<EOF
# written by scripts/kafka-temp.sh on every start
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=$listeners
advertised.listeners=$advertised
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL
log.dirs=$DIR/data
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# A broker restarted after SIGKILL cannot register until its old session expired (DUPLICATE_BROKER_REGISTRATION):
# 4 s instead of 9 s.
broker.session.timeout.ms=4000
broker.heartbeat.interval.ms=1000
# small: two cores, many brokers may run at once
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=33554432
EOF
  if [ -n "$sport" ] && [ "$second" = SSL ]; then
    make_test_certs "$DIR/tls" || die "could not make the certificates"
    cat "$DIR/tls/server.key" "$DIR/tls/server.crt" > "$DIR/tls/server.pem"
    cat >> "$DIR/server.properties" <<EOF
listener.name.ssl.ssl.keystore.type=PEM
listener.name.ssl.ssl.keystore.location=$DIR/tls/server.pem
ssl.client.auth=none
EOF
  elif [ -n "$sport" ]; then
    cat >> "$DIR/server.properties" <<EOF
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
EOF
  fi
  printf '%s\n' "${KAFKA_TEMP_PROPERTIES:-}" >> "$DIR/server.properties"
  cat > "$DIR/log4j2.properties" <<EOF
# written by scripts/kafka-temp.sh: WARN and above to server.log, plus the start line the script waits for
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $DIR/server.log
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = ${KAFKA_TEMP_LOG_LEVEL:-WARN}
rootLogger.appenderRef.file.ref = FILE
logger.started.name = kafka.server.KafkaRaftServer
logger.started.level = INFO
EOF
}

format_storage() {
  local cp; cp="$(java_cp)"
  [ -f "$DIR/data/meta.properties" ] && return 0
  # A cluster id as `kafka.tools.StorageTool random-uuid` makes it (16 random bytes, URL-safe base64 without
  # padding, not starting with '-'), without paying a JVM start for it.
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    [[ "$id" == -* ]] || break
  done
  "$JAVA" -cp "$cp" -Dlog4j2.configurationFile="$DIR/log4j2.properties" kafka.tools.StorageTool format \
      -t "$id" -c "$DIR/server.properties" >>"$DIR/format.log" 2>&1 ||
    { cat "$DIR/format.log" >&2; die "StorageTool format failed"; }
  echo "$id" > "$DIR/cluster.id"
}

# AppCDS: the archive is specific to the jars (the version is in the path) and to the JVM (its path and mtime).
cds_archive() {
  local java_path stamp
  java_path="$(readlink -f "$(command -v "$JAVA")")"
  stamp="$(stat -c %Y "$java_path" 2>/dev/null || echo 0)"
  echo "$(dirname "$KAFKA_LIB")/cds-$(echo "$java_path:$stamp" | md5sum | cut -c1-12).jsa"
}

cds_options() {
  [ "${KAFKA_TEMP_CDS:-1}" = 1 ] || return 0
  local archive; archive="$(cds_archive)"
  if [ -s "$archive" ]; then
    echo "-XX:SharedArchiveFile=$archive -Xlog:cds=off -Xlog:cds+dynamic=off"
  elif [ -w "$(dirname "$archive")" ]; then
    echo "-XX:ArchiveClassesAtExit=$DIR/cds-dump.jsa -Xlog:cds=off -Xlog:cds+dynamic=off"
  fi
}

# After the JVM exited: publish an archive it dumped (atomically: concurrent brokers may do the same).
publish_cds_archive() {
  [ -s "$DIR/cds-dump.jsa" ] || { rm -f "$DIR/cds-dump.jsa"; return 0; }
  local archive; archive="$(cds_archive)"
  if cp "$DIR/cds-dump.jsa" "$archive.tmp.$$" 2>/dev/null; then
    mv -f "$archive.tmp.$$" "$archive" || rm -f "$archive.tmp.$$"
  fi
  rm -f "$DIR/cds-dump.jsa"
}

# Launches the JVM and waits for "Kafka Server started" in this start's part of server.log.
# Returns 0 when started, 3 when a port was taken, 1 on another failure.
launch() {
  local bport="$1" cport="$2" cp logsize=0 outsize=0 pid
  cp="$(java_cp)"
  [ -f "$DIR/server.log" ] && logsize="$(stat -c %s "$DIR/server.log")"
  [ -f "$DIR/kafka.out" ] && outsize="$(stat -c %s "$DIR/kafka.out")"
  # setsid: its own session, so a terminal's signals do not reach it. In a non-interactive shell the background
  # child is not a group leader, so setsid(1) execs without forking and $! is the JVM's pid.
  # shellcheck disable=SC2086
  setsid "$JAVA" $HEAP_OPTS $(cds_options) $GC_OPTS -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Dkafka.temp.dir="$DIR" -Dlog4j2.configurationFile="$DIR/log4j2.properties" -Dkafka.logs.dir="$DIR" \
    -cp "$cp" kafka.Kafka "$DIR/server.properties" </dev/null >>"$DIR/kafka.out" 2>&1 &
  pid=$!
  echo "$pid" > "$DIR/kafka.pid"
  local deadline=$((SECONDS + START_TIMEOUT_S))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      local newlog newout
      newlog="$(tail -c +"$((logsize + 1))" "$DIR/server.log" 2>/dev/null || true)"
      newout="$(tail -c +"$((outsize + 1))" "$DIR/kafka.out" 2>/dev/null || true)"
      if grep -q -e "BindException" -e "Address already in use" <<<"$newlog$newout"; then
        return 3
      fi
      echo "$newlog" | tail -30 >&2
      echo "$newout" | tail -20 >&2
      echo "kafka-temp: the broker exited during start (logs: $DIR/server.log, $DIR/kafka.out)" >&2
      return 1
    fi
    if tail -c +"$((logsize + 1))" "$DIR/server.log" 2>/dev/null | grep -q "Kafka Server started"; then
      # The start line comes after the broker was unfenced; the port answering confirms the listener.
      if (exec 3<>"/dev/tcp/127.0.0.1/$bport") 2>/dev/null; then return 0; fi
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      kill -KILL "$pid" 2>/dev/null || true
      tail -c +"$((logsize + 1))" "$DIR/server.log" 2>/dev/null | tail -30 >&2
      echo "kafka-temp: the broker did not start in ${START_TIMEOUT_S}s (logs: $DIR/server.log, $DIR/kafka.out)" >&2
      return 1
    fi
    sleep 0.1
  done
}

cmd_start() {
  local want_port="${1:-}" bport cport sport="" fixed=0 attempt rc
  if running; then cmd_env; return 0; fi
  if [ -n "$want_port" ]; then
    bport="$want_port"; fixed=1
    if [ -f "$DIR/ports" ]; then cport="$(cut -d' ' -f2 "$DIR/ports")"; else cport="$(free_port "$bport")"; fi
  elif [ -f "$DIR/ports" ]; then
    read -r bport cport sport < "$DIR/ports"; fixed=1
  else
    bport="$(free_port)"; cport="$(free_port "$bport")"
  fi
  local second; second="$(second_protocol)"
  if [ -n "$second" ] && [ -z "$sport" ]; then sport="$(free_port "$bport")"; echo "$second" > "$DIR/second"; fi
  for attempt in 1 2 3 4 5; do
    echo "$bport $cport${sport:+ $sport}" > "$DIR/ports"
    write_config "$bport" "$cport" "$sport"
    format_storage
    rc=0; launch "$bport" "$cport" || rc=$?
    if [ "$rc" = 0 ]; then
      kill_with_owner "${KAFKA_TEMP_OWNER_PID:-}" "$(kafka_pid)" kafka-temp-watchdog
      cmd_env
      return 0
    fi
    if [ "$rc" = 3 ] && [ "$fixed" = 0 ] && [ "$attempt" -lt 5 ]; then
      bport="$(free_port)"; cport="$(free_port "$bport")"
      if [ -n "$sport" ]; then sport="$(free_port "$bport")"; fi
      continue
    fi
    [ "$rc" = 3 ] && echo "kafka-temp: port $bport, $cport${sport:+ or $sport} is in use" >&2
    exit 1
  done
}

cmd_stop() {
  running || { rm -f "$DIR/kafka.pid"; return 0; }
  local pid; pid="$(kafka_pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + STOP_TIMEOUT_S))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "kafka-temp: no exit ${STOP_TIMEOUT_S}s after SIGTERM, sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.05
  done
  wait_gone "$pid"
  publish_cds_archive
}

cmd_kill() {
  running || { rm -f "$DIR/kafka.pid"; return 0; }
  local pid; pid="$(kafka_pid)"
  kill -KILL "$pid" 2>/dev/null || true
  wait_gone "$pid"
  rm -f "$DIR/cds-dump.jsa"
}

# The JVM is not our child: wait until its pid is gone (a zombie only until init reaps it).
wait_gone() {
  local pid="$1" deadline=$((SECONDS + 30))
  while [ -e "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "pid $pid did not go away"
    sleep 0.02
  done
  rm -f "$DIR/kafka.pid"
}

cmd_env() {
  [ -f "$DIR/ports" ] || die "$DIR was never started"
  local bport cport sport
  read -r bport cport sport < "$DIR/ports"
  echo "KAFKA_BOOTSTRAP=127.0.0.1:$bport"
  [ -n "$sport" ] || return 0
  if [ "$(second_protocol)" = SSL ]; then
    echo "KAFKA_TLS_BOOTSTRAP=127.0.0.1:$sport"
    echo "TLS_DIR=$DIR/tls"
  else
    echo "KAFKA_SASL_BOOTSTRAP=127.0.0.1:$sport"
  fi
}

[ $# -ge 2 ] || usage
CMD="$1"
[ -n "$2" ] || usage
DIR="$(abs_dir "$CMD" "$2")"
shift 2
case "$CMD" in
  start) cmd_start "$@" ;;
  stop) cmd_stop ;;
  kill) cmd_kill ;;
  restart) cmd_stop; cmd_start ;;
  status) running ;;
  env) cmd_env ;;
  *) usage ;;
esac
