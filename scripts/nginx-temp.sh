#!/usr/bin/env bash
# A throwaway nginx (Debian's) terminating HTTPS in front of a plain-HTTP receiver, for the HTTP sink's tests and the
# README. Its CA and server certificate (for localhost and 127.0.0.1) are made with openssl at start.
#
#   scripts/nginx-temp.sh start DIR UPSTREAM_PORT [PORT]   write DIR/nginx.conf, make DIR/ca.crt, start nginx on
#                                                          127.0.0.1:PORT proxying to 127.0.0.1:UPSTREAM_PORT, and on
#                                                          a second port that requires a client certificate of the
#                                                          same CA (mutual TLS); print HTTPS_PORT=<port>,
#                                                          MTLS_PORT=<port>, CA_FILE=DIR/ca.crt,
#                                                          CLIENT_CERT=DIR/client.crt and CLIENT_KEY=DIR/client.key
#   scripts/nginx-temp.sh stop DIR                         SIGQUIT (graceful), wait (10 s), then SIGKILL
#   scripts/nginx-temp.sh status DIR                       exit 0 when running
#
# Without PORT, start re-uses the port of an earlier start of DIR, or picks a free one. Files in DIR: nginx.conf,
# nginx.pid, error.log, access.log, port, mtls_port, ca.{crt,key}, server.{crt,key}, client.{crt,key}
# (scripts/lib.sh make_test_certs), tmp/.
set -euo pipefail

START_TIMEOUT_S="${NGINX_TEMP_START_TIMEOUT_S:-20}"
die() { echo "nginx-temp: $*" >&2; exit 1; }
usage() { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"  # free_port, make_test_certs

[ $# -ge 2 ] || usage
CMD="$1"
mkdir -p "$2"
DIR="$(cd "$2" && pwd)"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

server_pid() { [ -f "$DIR/nginx.pid" ] && cat "$DIR/nginx.pid"; }
running() {
  local pid; pid="$(server_pid 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$DIR"
}
serving() { (exec 3<>"/dev/tcp/127.0.0.1/$(cat "$DIR/port")") 2>/dev/null; }
env_lines() {
  echo "HTTPS_PORT=$(cat "$DIR/port")"
  echo "MTLS_PORT=$(cat "$DIR/mtls_port")"
  echo "CA_FILE=$DIR/ca.crt"
  echo "CLIENT_CERT=$DIR/client.crt"
  echo "CLIENT_KEY=$DIR/client.key"
}

case "$CMD" in
  start)
    [ -x "$NGINX" ] || die "nginx is not installed: run scripts/install-deps.sh"
    [ $# -ge 3 ] || usage
    upstream="$3"
    if running; then env_lines; exit 0; fi
    port="${4:-}"
    [ -n "$port" ] || { [ -f "$DIR/port" ] && port="$(cat "$DIR/port")"; } || true
    [ -n "$port" ] || port="$(free_port)"
    echo "$port" > "$DIR/port"
    mtls_port=""
    [ -f "$DIR/mtls_port" ] && mtls_port="$(cat "$DIR/mtls_port")"
    [ -n "$mtls_port" ] || mtls_port="$(free_port)"
    echo "$mtls_port" > "$DIR/mtls_port"
    make_test_certs "$DIR" || die "could not make the certificates"
    mkdir -p "$DIR/tmp"
    chmod 755 "$DIR"
    chmod 777 "$DIR/tmp"
    user_line=""
    [ "$(id -u)" = 0 ] && user_line="user root;"
    cat > "$DIR/nginx.conf" <<CONF
# written by scripts/nginx-temp.sh on every start
$user_line
daemon on;
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/error.log info;
events { worker_connections 512; }
http {
  access_log $DIR/access.log;
  client_body_temp_path $DIR/tmp/body;
  proxy_temp_path $DIR/tmp/proxy;
  fastcgi_temp_path $DIR/tmp/fastcgi;
  uwsgi_temp_path $DIR/tmp/uwsgi;
  scgi_temp_path $DIR/tmp/scgi;
  upstream receiver { server 127.0.0.1:$upstream; keepalive 16; }
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $DIR/server.crt;
    ssl_certificate_key $DIR/server.key;
    underscores_in_headers on;   # the records' source_lsn header
    client_max_body_size 16m;
    location / {
      proxy_pass http://receiver;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream off;     # a POST is never resent by nginx: the relay decides
      proxy_read_timeout 60s;
    }
  }
  server {                       # mutual TLS: no answer but 400 without a client certificate of the CA
    listen 127.0.0.1:$mtls_port ssl;
    ssl_certificate $DIR/server.crt;
    ssl_certificate_key $DIR/server.key;
    ssl_client_certificate $DIR/ca.crt;
    ssl_verify_client on;
    underscores_in_headers on;
    client_max_body_size 16m;
    location / {
      proxy_pass http://receiver;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Client-Subject \$ssl_client_s_dn;
      proxy_next_upstream off;
      proxy_read_timeout 60s;
    }
  }
}
CONF
    : > "$DIR/error.log"
    "$NGINX" -p "$DIR" -c "$DIR/nginx.conf" -e "$DIR/error.log" || die "nginx did not start: $(tail -5 "$DIR/error.log")"
    deadline=$((SECONDS + START_TIMEOUT_S))
    until running && serving; do
      [ $SECONDS -lt $deadline ] || die "nginx did not serve within ${START_TIMEOUT_S} s: $(tail -5 "$DIR/error.log")"
      sleep 0.1
    done
    env_lines
    ;;
  stop)
    running || exit 0
    pid="$(server_pid)"
    kill -QUIT "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" || true
    ;;
  status) running ;;
  *) usage ;;
esac
