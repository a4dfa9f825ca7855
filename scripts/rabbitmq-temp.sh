#!/usr/bin/env bash
# A throwaway RabbitMQ node (Debian's rabbitmq-server) for tests and the README: its own node name, AMQP,
# distribution and epmd ports, data, logs, Erlang cookie and config under DIR; no plugins (no management listener).
#
#   scripts/rabbitmq-temp.sh start DIR      start in the background, wait until it serves, print
#                                           RABBITMQ_URL=amqp://guest:guest@127.0.0.1:<port>/
#   scripts/rabbitmq-temp.sh stop DIR       a clean stop (SIGTERM, wait 30 s, then SIGKILL), and its epmd
#   scripts/rabbitmq-temp.sh kill DIR       SIGKILL of the node (a crash; the next start recovers its data)
#   scripts/rabbitmq-temp.sh status DIR     exit 0 when running
#   scripts/rabbitmq-temp.sh env DIR        print RABBITMQ_URL=...
#   scripts/rabbitmq-temp.sh ctl DIR ARGS.. rabbitmqctl against the node (e.g. set_vm_memory_high_watermark 0.0001)
#
# `start` re-uses the ports of an earlier start of DIR, or picks free ones. Files in DIR: env (the node's
# environment), rabbitmq.conf, home/.erlang.cookie, mnesia/, log/, node.pid (the Erlang VM), wrapper.pid.
# RABBITMQ_TEMP_CONF: lines appended to rabbitmq.conf.
# RABBITMQ_TEMP_TLS=on: also an amqps listener (listeners.ssl.default) with a throwaway CA and server certificate made
# by openssl in DIR/tls (scripts/lib.sh make_test_certs; DIR/tls/client.{crt,key} is a client certificate it signs);
# =peer: the same, and the node refuses a client without a certificate of that CA (verify_peer,
# fail_if_no_peer_cert). `start` and `env` then print RABBITMQ_TLS_URL=amqps://guest:guest@127.0.0.1:<port>/ and
# TLS_DIR=DIR/tls too. The plain listener stays (the tests' second client uses it).
set -euo pipefail

START_TIMEOUT_S="${RABBITMQ_TEMP_START_TIMEOUT_S:-90}"
RMQ_BIN=/usr/lib/rabbitmq/bin
die() { echo "rabbitmq-temp: $*" >&2; exit 1; }
usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"  # free_port, make_test_certs

[ $# -ge 2 ] || usage
CMD="$1"
mkdir -p "$2"
DIR="$(cd "$2" && pwd)"
shift 2

load_env() { [ -f "$DIR/env" ] && source "$DIR/env"; }
node_pid() { [ -f "$DIR/node.pid" ] && cat "$DIR/node.pid"; }
running() {
  local pid; pid="$(node_pid 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-home $DIR/home "
}
url() {
  load_env
  echo "RABBITMQ_URL=amqp://guest:guest@127.0.0.1:$RABBITMQ_NODE_PORT/"
  if [ -f "$DIR/tls_port" ]; then
    echo "RABBITMQ_TLS_URL=amqps://guest:guest@127.0.0.1:$(cat "$DIR/tls_port")/"
    echo "TLS_DIR=$DIR/tls"
  fi
}
# rabbitmq.conf lines of the amqps listener for RABBITMQ_TEMP_TLS (on or peer), "" without it.
tls_conf() {
  case "${RABBITMQ_TEMP_TLS:-}" in
    "") rm -f "$DIR/tls_port"; return 0 ;;
    on|peer) ;;
    *) die "RABBITMQ_TEMP_TLS: on or peer, not ${RABBITMQ_TEMP_TLS}" ;;
  esac
  make_test_certs "$DIR/tls" || die "could not make the certificates"
  [ -f "$DIR/tls_port" ] || free_port "$RABBITMQ_NODE_PORT" > "$DIR/tls_port"
  local verify=verify_none fail=false
  [ "$RABBITMQ_TEMP_TLS" = on ] || { verify=verify_peer; fail=true; }
  cat <<CONF
listeners.ssl.default = 127.0.0.1:$(cat "$DIR/tls_port")
ssl_options.cacertfile = $DIR/tls/ca.crt
ssl_options.certfile = $DIR/tls/server.crt
ssl_options.keyfile = $DIR/tls/server.key
ssl_options.verify = $verify
ssl_options.fail_if_no_peer_cert = $fail
CONF
}
ctl() { load_env; "$RMQ_BIN/rabbitmqctl" -n "$RABBITMQ_NODENAME" "$@"; }
# The epmd of this node's ERL_EPMD_PORT (started by the node's VM; it outlives a stop).
stop_epmd() {
  load_env
  local pid
  for pid in $(pgrep -x epmd 2>/dev/null || true); do
    if tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-port $ERL_EPMD_PORT\b" ||
       tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "ERL_EPMD_PORT=$ERL_EPMD_PORT"; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

case "$CMD" in
  start)
    [ -x "$RMQ_BIN/rabbitmq-server" ] || die "rabbitmq-server is not installed: run scripts/install-deps.sh"
    if running; then url; exit 0; fi
    if [ ! -f "$DIR/env" ]; then
      name="rmq$(basename "$DIR" | tr -dc 'a-zA-Z0-9' | tail -c 20)$$"
      cat > "$DIR/env" <<ENV
export RABBITMQ_NODENAME=$name@localhost
export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
export RABBITMQ_NODE_PORT=$(free_port)
export RABBITMQ_DIST_PORT=$(free_port)
export ERL_EPMD_PORT=$(free_port)
export HOME=$DIR/home
export RABBITMQ_CONFIG_FILE=$DIR/rabbitmq.conf
export RABBITMQ_ADVANCED_CONFIG_FILE=$DIR/advanced.config
export RABBITMQ_CONF_ENV_FILE=$DIR/rabbitmq-env.conf
export RABBITMQ_ENABLED_PLUGINS_FILE=$DIR/enabled_plugins
export RABBITMQ_MNESIA_BASE=$DIR/mnesia
export RABBITMQ_LOG_BASE=$DIR/log
export RABBITMQ_PID_FILE=$DIR/node.pid
export RABBITMQ_FEATURE_FLAGS_FILE=$DIR/feature_flags
export RABBITMQ_PLUGINS_EXPAND_DIR=$DIR/plugins-expand
export RABBITMQ_LOGS=$DIR/log/node.log
export RABBITMQ_USE_LONGNAME=false
ENV
    fi
    load_env
    mkdir -p "$HOME" "$RABBITMQ_MNESIA_BASE" "$RABBITMQ_LOG_BASE"
    if [ ! -f "$HOME/.erlang.cookie" ]; then
      head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr 'a-f' 'A-F' > "$HOME/.erlang.cookie"
      chmod 400 "$HOME/.erlang.cookie"
    fi
    echo "[]." > "$RABBITMQ_ENABLED_PLUGINS_FILE"
    : > "$RABBITMQ_CONF_ENV_FILE"
    echo "[]." > "$RABBITMQ_ADVANCED_CONFIG_FILE"
    tls_lines="$(tls_conf)"
    cat > "$RABBITMQ_CONFIG_FILE" <<CONF
# written by scripts/rabbitmq-temp.sh on every start
listeners.tcp.default = 127.0.0.1:$RABBITMQ_NODE_PORT
disk_free_limit.absolute = 1MB
$tls_lines
${RABBITMQ_TEMP_CONF:-}
CONF
    rm -f "$DIR/node.pid"
    nohup "$RMQ_BIN/rabbitmq-server" >"$DIR/log/stdout.log" 2>&1 </dev/null &
    echo $! > "$DIR/wrapper.pid"
    deadline=$((SECONDS + START_TIMEOUT_S))
    until [ -s "$DIR/node.pid" ] && ctl -q await_startup --timeout 5 >/dev/null 2>&1; do
      kill -0 "$(cat "$DIR/wrapper.pid")" 2>/dev/null || die "rabbitmq-server exited: $(tail -20 "$DIR/log/stdout.log")"
      [ $SECONDS -lt $deadline ] || die "rabbitmq-server did not start within ${START_TIMEOUT_S} s"
      sleep 0.5
    done
    url
    ;;
  stop|kill)
    if running; then
      pid="$(node_pid)"
      if [ "$CMD" = kill ]; then kill -KILL "$pid"; else kill -TERM "$pid"; fi
      for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    if [ -f "$DIR/wrapper.pid" ]; then
      wpid="$(cat "$DIR/wrapper.pid")"
      for _ in $(seq 1 50); do kill -0 "$wpid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$wpid" 2>/dev/null || true
    fi
    [ "$CMD" = kill ] || stop_epmd
    ;;
  status) running ;;
  env) [ -f "$DIR/env" ] || die "never started"; url ;;
  ctl) ctl "$@" ;;
  *) usage ;;
esac
