#!/usr/bin/env bash
# A throwaway NATS server with JetStream (Debian's nats-server -js) for tests and the README.
#
#   scripts/nats-temp.sh start DIR [PORT]   start in the background with its store in DIR/js, wait until it serves,
#                                           print NATS_URL=nats://127.0.0.1:<port>
#   scripts/nats-temp.sh stop DIR           SIGTERM, wait (10 s), then SIGKILL
#   scripts/nats-temp.sh kill DIR           SIGKILL (a crash; the next start recovers the store)
#   scripts/nats-temp.sh status DIR         exit 0 when running
#   scripts/nats-temp.sh env DIR            print NATS_URL=nats://127.0.0.1:<port>
#
# Without PORT, `start` re-uses the port of an earlier start of DIR, or picks a free one. Files in DIR: server.conf,
# nats.log, nats.pid, port, js/. NATS_TEMP_CONF: lines appended to server.conf (e.g. authorization { ... }).
# NATS_TEMP_TLS=on: the port serves TLS only (a tls { } block) with a throwaway CA and server certificate made by
# openssl in DIR/tls (scripts/lib.sh make_test_certs); `start` and `env` then print NATS_URL=tls://127.0.0.1:<port>
# and TLS_DIR=DIR/tls. NATS_TEMP_TLS=verify: the same, and clients must present a certificate signed by that CA
# (mutual TLS: verify: true; DIR/tls/client.crt and client.key are one).
set -euo pipefail

START_TIMEOUT_S="${NATS_TEMP_START_TIMEOUT_S:-20}"
die() { echo "nats-temp: $*" >&2; exit 1; }
usage() { sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"  # free_port, make_test_certs

[ $# -ge 2 ] || usage
CMD="$1"
mkdir -p "$2"
DIR="$(cd "$2" && pwd)"

server_pid() { [ -f "$DIR/nats.pid" ] && cat "$DIR/nats.pid"; }
running() {
  local pid; pid="$(server_pid 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$DIR/server.conf"
}
url() {
  if grep -q "^tls {" "$DIR/server.conf" 2>/dev/null; then
    echo "NATS_URL=tls://127.0.0.1:$(cat "$DIR/port")"
    echo "TLS_DIR=$DIR/tls"
  else
    echo "NATS_URL=nats://127.0.0.1:$(cat "$DIR/port")"
  fi
}
# server.conf's tls block for NATS_TEMP_TLS=on, "" without it.
tls_conf() {
  local verify=""
  case "${NATS_TEMP_TLS:-}" in
    "") return 0 ;;
    on) ;;
    verify) verify=", verify: true" ;;
    *) die "NATS_TEMP_TLS: on or verify, not ${NATS_TEMP_TLS}" ;;
  esac
  make_test_certs "$DIR/tls" || die "could not make the certificates"
  echo "tls { cert_file: \"$DIR/tls/server.crt\", key_file: \"$DIR/tls/server.key\", ca_file: \"$DIR/tls/ca.crt\"$verify }"
}
serving() { (exec 3<>"/dev/tcp/127.0.0.1/$(cat "$DIR/port")") 2>/dev/null && grep -q "Server is ready" "$DIR/nats.log"; }

case "$CMD" in
  start)
    command -v nats-server >/dev/null || die "nats-server is not installed: run scripts/install-deps.sh"
    if running; then url; exit 0; fi
    port="${3:-}"
    [ -n "$port" ] || { [ -f "$DIR/port" ] && port="$(cat "$DIR/port")"; } || true
    [ -n "$port" ] || port="$(free_port)"
    echo "$port" > "$DIR/port"
    mkdir -p "$DIR/js"
    tls_lines="$(tls_conf)"
    cat > "$DIR/server.conf" <<CONF
# written by scripts/nats-temp.sh on every start
listen: 127.0.0.1:$port
jetstream { store_dir: "$DIR/js" }
$tls_lines
${NATS_TEMP_CONF:-}
CONF
    : > "$DIR/nats.log"
    nohup nats-server -c "$DIR/server.conf" -l "$DIR/nats.log" >/dev/null 2>&1 < /dev/null &
    echo $! > "$DIR/nats.pid"
    deadline=$((SECONDS + START_TIMEOUT_S))
    until serving; do
      # kill -0, not running(): for a moment after the fork the child is still this shell (its cmdline does not
      # name server.conf yet), which running() would take for an exited server.
      kill -0 "$(server_pid)" 2>/dev/null || die "nats-server exited: $(tail -5 "$DIR/nats.log")"
      [ $SECONDS -lt $deadline ] || die "nats-server did not serve within ${START_TIMEOUT_S} s"
      sleep 0.1
    done
    url
    ;;
  stop|kill)
    running || exit 0
    pid="$(server_pid)"
    if [ "$CMD" = kill ]; then kill -KILL "$pid"; else kill -TERM "$pid"; fi
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    ;;
  status) running ;;
  env) [ -f "$DIR/port" ] || die "never started"; url ;;
  *) usage ;;
esac
