#!/usr/bin/env bash
# A throwaway PostgreSQL for tests, benchmarks and the README quickstart: 15 from Debian by default, another
# version with PG_BIN=<its bin dir> (scripts/install-pg.sh 17|18 prints that version's).
#
#   scripts/pg-temp.sh start DIR [PORT]    initdb DIR/data (first time), start, print PGPORT=<port>
#   scripts/pg-temp.sh stop DIR [MODE]     pg_ctl stop -m MODE (fast by default; smart|fast|immediate)
#   scripts/pg-temp.sh restart DIR [MODE]  stop, then start on the same port and data
#   scripts/pg-temp.sh status DIR          exit 0 when running
#   scripts/pg-temp.sh env DIR             print PGHOST=127.0.0.1, PGPORT=<port>, PGUSER=postgres
#   scripts/pg-temp.sh standby DIR PRIMARY_PORT [SLOT]
#                                          a physical standby of the server at PRIMARY_PORT: pg_basebackup -R
#                                          (first time; streaming from SLOT, which must exist), start, print PGPORT=
#
# The server: wal_level=logical, 20 replication slots and WAL senders, wal_sender_timeout=60s, listening on
# 127.0.0.1 only with its unix socket in DIR, trust authentication (also for replication), superuser `postgres`,
# locale C, UTF8. fsync is off (a throwaway server: process crashes and immediate shutdowns are still safe, only
# an OS crash is not). PG_TEMP_CONF (lines of postgresql.conf) is appended on every start, e.g.
# PG_TEMP_CONF=$'fsync=on\nmax_slot_wal_keep_size=64MB'.
#
# Without PORT, `start` re-uses the port of an earlier start of DIR, or picks a free one (and retries with
# another one if it was taken meanwhile). PostgreSQL refuses to run as root: when run as root, the server runs as
# $OUTBOX_TEST_USER, else the user `outbox-test` when it exists, else `nobody` (DIR is chown'ed to that user; its
# parent directories must be searchable by it, /tmp is). PG_TEMP_OWNER_PID=<pid>: a watchdog stops the server
# with -m immediate when that process is gone (for test fixtures that may crash).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/versions.sh
source "$HERE/versions.sh"

PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
START_TIMEOUT_S="${PG_TEMP_START_TIMEOUT_S:-60}"
STOP_TIMEOUT_S="${PG_TEMP_STOP_TIMEOUT_S:-60}"

die() { echo "pg-temp: $*" >&2; exit 1; }
usage() { sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# shellcheck source=scripts/lib.sh
source "$HERE/lib.sh"  # free_port

# An absolute DIR; created only by `start` and `standby`.
abs_dir() {
  case "$1" in start|standby) mkdir -p "$2" ;; esac
  if [ -d "$2" ]; then (cd "$2" && pwd); else echo "$(cd "$(dirname "$2")" 2>/dev/null && pwd || echo /nonexistent)/$(basename "$2")"; fi
}

# The OS user that runs initdb/postgres/pg_ctl, empty when not root.
run_user() {
  if [ "$(id -u)" != 0 ]; then echo ""; return; fi
  if [ -n "${OUTBOX_TEST_USER:-}" ]; then echo "$OUTBOX_TEST_USER"; return; fi
  if id -u outbox-test >/dev/null 2>&1; then echo outbox-test; return; fi
  echo nobody
}

# Runs a command as the server's user, from DIR (the caller's cwd may not be readable by that user).
as_user() {
  local u; u="$(run_user)"
  if [ -n "$u" ]; then
    (cd "$DIR" && runuser -u "$u" -- "$@")
  else
    (cd "$DIR" && "$@")
  fi
}

pg_running() { [ -f "$DATA/postmaster.pid" ] && as_user "$PG_BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

write_conf() {
  local port="$1"
  cat > "$DATA/pg_temp.conf" <<EOF
# written by scripts/pg-temp.sh on every start
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$DIR'
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
wal_sender_timeout = 60s
fsync = off
full_page_writes = off
synchronous_commit = on
logging_collector = off
log_min_messages = warning
log_line_prefix = '%m [%p] %q%a '
${PG_TEMP_CONF:-}
EOF
  grep -q "^include_if_exists = 'pg_temp.conf'" "$DATA/postgresql.conf" ||
    echo "include_if_exists = 'pg_temp.conf'" >> "$DATA/postgresql.conf"
  cat > "$DATA/pg_hba.conf" <<EOF
# written by scripts/pg-temp.sh: a throwaway server, trust for the unix socket and 127.0.0.1 only
local   all             all                     trust
local   replication     all                     trust
host    all             all     127.0.0.1/32    trust
host    replication     all     127.0.0.1/32    trust
EOF
  local u; u="$(run_user)"
  if [ -n "$u" ]; then chown "$u" "$DATA/pg_temp.conf" "$DATA/pg_hba.conf"; fi
}

start_watchdog() {
  local owner="${PG_TEMP_OWNER_PID:-}"
  [ -n "$owner" ] || return 0
  local pid; pid="$(head -1 "$DATA/postmaster.pid")"
  # Detached, stdio closed: the caller may read our stdout until EOF. It ends with the server or the owner.
  setsid bash -c '
    owner=$1; pid=$2; self=$3; dir=$4
    while kill -0 "$owner" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then "$self" stop "$dir" immediate; fi' \
    pg-temp-watchdog "$owner" "$pid" "$HERE/pg-temp.sh" "$DIR" </dev/null >/dev/null 2>&1 &
}

cmd_start() {
  local want_port="${1:-}"
  local u; u="$(run_user)"
  if [ -n "$u" ]; then
    id -u "$u" >/dev/null 2>&1 || die "user $u does not exist (set OUTBOX_TEST_USER)"
    chown "$u" "$DIR"
    chmod 700 "$DIR"
    runuser -u "$u" -- test -w "$DIR" ||
      die "$DIR is not reachable by user $u (its parent directories must be searchable): use a dir under /tmp"
    runuser -u "$u" -- test -x "$PG_BIN/postgres" ||
      die "$PG_BIN/postgres is not executable by user $u (PG_BIN's parent directories must be searchable)"
  fi
  [ "${#DIR}" -le 90 ] || die "$DIR is too long for a unix socket path (PostgreSQL allows 107 bytes)"
  if pg_running; then
    echo "PGPORT=$(cat "$DIR/port")"
    return 0
  fi
  if [ ! -f "$DATA/PG_VERSION" ]; then
    rm -rf "$DATA"
    as_user "$PG_BIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C --no-sync --no-instructions \
      > "$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; die "initdb failed"; }
  fi
  local port fixed=0 attempt
  if [ -n "$want_port" ]; then port="$want_port"; fixed=1
  elif [ -f "$DIR/port" ]; then port="$(cat "$DIR/port")"; fixed=1
  else port="$(free_port)"; fi
  for attempt in 1 2 3 4 5; do
    write_conf "$port"
    echo "$port" > "$DIR/port"
    local logsize=0
    [ -f "$DIR/postgres.log" ] && logsize="$(stat -c %s "$DIR/postgres.log")"
    if as_user "$PG_BIN/pg_ctl" -D "$DATA" -l "$DIR/postgres.log" -w -t "$START_TIMEOUT_S" start >/dev/null 2>&1; then
      break
    fi
    local newlog; newlog="$(tail -c +"$((logsize + 1))" "$DIR/postgres.log" 2>/dev/null || true)"
    if [ "$fixed" = 0 ] && [ "$attempt" -lt 5 ] && grep -q -e "could not bind" -e "could not create any TCP" <<<"$newlog"; then
      port="$(free_port)"
      continue
    fi
    echo "$newlog" | tail -30 >&2
    die "postgres did not start on port $port (log: $DIR/postgres.log)"
  done
  # pg_ctl -w waited for "ready"; confirm over TCP as clients will connect.
  local deadline=$((SECONDS + START_TIMEOUT_S))
  until "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -t 2; do
    [ "$SECONDS" -lt "$deadline" ] || die "pg_isready failed for ${START_TIMEOUT_S}s on port $port"
    sleep 0.1
  done
  start_watchdog
  echo "PGPORT=$port"
}

cmd_stop() {
  local mode="${1:-fast}"
  case "$mode" in smart|fast|immediate) ;; *) die "unknown stop mode $mode" ;; esac
  [ -f "$DATA/postmaster.pid" ] || return 0
  pg_running || return 0
  as_user "$PG_BIN/pg_ctl" -D "$DATA" -m "$mode" -w -t "$STOP_TIMEOUT_S" stop >/dev/null ||
    die "pg_ctl stop -m $mode did not complete in ${STOP_TIMEOUT_S}s (log: $DIR/postgres.log)"
}

# pg_basebackup -R from the primary: recovery settings (standby.signal, primary_conninfo with dbname=postgres,
# which slot synchronization needs, primary_slot_name) land in postgresql.auto.conf; pg_temp.conf is rewritten
# by start.
cmd_standby() {
  local primary_port="${1:-}" slot="${2:-}"
  [ -n "$primary_port" ] || usage
  if [ ! -f "$DATA/PG_VERSION" ]; then
    local u; u="$(run_user)"
    if [ -n "$u" ]; then chown "$u" "$DIR"; chmod 700 "$DIR"; fi
    rm -rf "$DATA"
    local args=(-D "$DATA" -d "host=127.0.0.1 port=$primary_port user=postgres dbname=postgres" -R -X stream
                --checkpoint=fast --no-sync)
    if [ -n "$slot" ]; then args+=(-S "$slot"); fi
    as_user "$PG_BIN/pg_basebackup" "${args[@]}" > "$DIR/basebackup.log" 2>&1 ||
      { cat "$DIR/basebackup.log" >&2; die "pg_basebackup from port $primary_port failed"; }
    rm -f "$DIR/port"
  fi
  cmd_start
}

cmd_env() {
  [ -f "$DIR/port" ] || die "$DIR was never started"
  echo "PGHOST=127.0.0.1"
  echo "PGPORT=$(cat "$DIR/port")"
  echo "PGUSER=postgres"
}

[ $# -ge 2 ] || usage
CMD="$1"
[ -n "$2" ] || usage
DIR="$(abs_dir "$CMD" "$2")"
DATA="$DIR/data"
shift 2
case "$CMD" in
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  restart) cmd_stop "$@"; cmd_start ;;
  status) pg_running ;;
  env) cmd_env ;;
  standby) cmd_standby "$@" ;;
  *) usage ;;
esac
