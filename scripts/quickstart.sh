#!/usr/bin/env bash
# The README's first command: on a fresh Debian machine, install what is missing, build, start a throwaway
# PostgreSQL and a local single-node Kafka (KRaft), create the outbox table, publication and slot, run the relay,
# insert sample events, show them arriving in their topics through a consumer, and stop everything cleanly.
# With --sink rabbitmq: a throwaway RabbitMQ node instead of Kafka, an exchange `outbox` (topic) with a queue bound
# to it, read back with pika. With --sink nats, a throwaway nats-server with JetStream and a stream OUTBOX on the
# subjects outbox.event.>, read back with nats-py. With --sink http, no broker: the relay POSTs the events to a local
# webhook receiver (scripts/webhook-receiver.py).
#
#   scripts/quickstart.sh [--events N] [--sink kafka|rabbitmq|nats|http]
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
source "$HERE/versions.sh"

EVENTS=20
SINK=kafka
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS="$2"; shift 2 ;;
    --sink) SINK="$2"; shift 2 ;;
    *) echo "quickstart: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$SINK" in
  kafka|rabbitmq|nats|http) ;;
  *) echo "quickstart: --sink must be kafka, rabbitmq, nats or http" >&2; exit 2 ;;
esac

say() { echo "==> $*"; }
t0=$(date +%s.%N)

say "installing dependencies (skipped when present)"
bash "$HERE/install-deps.sh"

say "building"
BUILD="$ROOT/build"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$BUILD" outbox-relay outbox-consume >/dev/null
RELAY="$BUILD/src/app/outbox-relay"
CONSUME="$BUILD/tools/outbox-consume"

WORK="$(mktemp -d /tmp/outbox-quickstart.XXXXXX)"
chmod 755 "$WORK"
relay_pid=""
receiver_pid=""
cleanup() {
  set +e
  [ -n "$relay_pid" ] && kill -TERM "$relay_pid" 2>/dev/null && wait "$relay_pid" 2>/dev/null
  [ -n "$receiver_pid" ] && kill -TERM "$receiver_pid" 2>/dev/null && wait "$receiver_pid" 2>/dev/null
  bash "$HERE/kafka-temp.sh" stop "$WORK/kafka" >/dev/null 2>&1
  bash "$HERE/rabbitmq-temp.sh" stop "$WORK/rabbitmq" >/dev/null 2>&1
  bash "$HERE/nats-temp.sh" stop "$WORK/nats" >/dev/null 2>&1
  bash "$HERE/pg-temp.sh" stop "$WORK/pg" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

say "starting a throwaway PostgreSQL (wal_level=logical)"
eval "$(bash "$HERE/pg-temp.sh" start "$WORK/pg" | grep '^PGPORT=')"
psql() { command psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres "$@"; }
# The sink's part of relay.yaml; without Kafka the checkpoint lives in a file.
if [ "$SINK" = rabbitmq ]; then
  say "starting a throwaway RabbitMQ node"
  eval "$(bash "$HERE/rabbitmq-temp.sh" start "$WORK/rabbitmq" | grep '^RABBITMQ_URL=')"
  rmq_tool() { "$PIKA_VENV/bin/python" "$ROOT/tests/rabbitmq/rmq_tool.py" "$RABBITMQ_URL" "$@"; }
  say "declaring the exchange outbox (topic) and the queue outbox.events bound to it with #"
  rmq_tool setup outbox outbox.events '#'
  sink_yaml="sink:
  type: rabbitmq
rabbitmq:
  url: \"$RABBITMQ_URL\"
  exchange: outbox"
elif [ "$SINK" = nats ]; then
  say "starting a throwaway nats-server with JetStream"
  eval "$(bash "$HERE/nats-temp.sh" start "$WORK/nats" | grep '^NATS_URL=')"
  nats_tool() { "$NATS_PY_VENV/bin/python" "$ROOT/tests/nats/nats_tool.py" "$NATS_URL" "$@"; }
  say "adding the stream OUTBOX on the subjects outbox.event.>"
  nats_tool add-stream OUTBOX 'outbox.event.>'
  sink_yaml="sink:
  type: nats
nats:
  url: \"$NATS_URL\"
  stream: OUTBOX"
elif [ "$SINK" = http ]; then
  say "starting a webhook receiver (scripts/webhook-receiver.py)"
  : > "$WORK/requests.txt"
  python3 "$HERE/webhook-receiver.py" "$WORK/receiver.port" "$WORK/requests.txt" &
  receiver_pid=$!
  for _ in $(seq 1 100); do [ -s "$WORK/receiver.port" ] && break; sleep 0.1; done
  sink_yaml="sink:
  type: http
http_sink:
  url: \"http://127.0.0.1:$(cat "$WORK/receiver.port")/events/\${routedByValue}\""
else
  say "starting a single-node Kafka $KAFKA_VERSION (KRaft)"
  eval "$(bash "$HERE/kafka-temp.sh" start "$WORK/kafka" | grep '^KAFKA_BOOTSTRAP=')"
  sink_yaml="kafka:
  bootstrap.servers: \"$KAFKA_BOOTSTRAP\""
fi
checkpoint_yaml=""
if [ "$SINK" != kafka ]; then
  checkpoint_yaml="  checkpoint: file
  checkpoint_file: \"$WORK/checkpoint.json\""
fi
cat > "$WORK/relay.yaml" <<YAML
source:
  conninfo: "host=127.0.0.1 port=$PGPORT dbname=postgres user=postgres"
  slot: outbox_relay
  publication: outbox_pub
$checkpoint_yaml
outbox:
  table: public.outbox
$sink_yaml
http:
  listen: "127.0.0.1:0"
YAML

say "outbox-relay init --create-table"
"$RELAY" init -c "$WORK/relay.yaml" --create-table

say "outbox-relay run (log: relay.log)"
"$RELAY" run -c "$WORK/relay.yaml" > "$WORK/relay.log" 2>&1 &
relay_pid=$!

say "inserting $EVENTS events (and one rolled-back transaction that must not arrive)"
t_insert=$(date +%s.%N)
psql <<SQL
CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY, total numeric);
BEGIN;
INSERT INTO orders SELECT 'o' || g, g * 10 FROM generate_series(1, $EVENTS) g;
INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload)
  SELECT gen_random_uuid(), 'order', 'o' || g, CASE WHEN g % 2 = 0 THEN 'OrderPaid' ELSE 'OrderCreated' END,
         jsonb_build_object('order', 'o' || g, 'total', g * 10)
  FROM generate_series(1, $EVENTS) g;
COMMIT;
BEGIN;
INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload)
  VALUES (gen_random_uuid(), 'order', 'rolled-back', 'OrderCreated', '{"never": true}');
ROLLBACK;
SQL

if [ "$SINK" = rabbitmq ]; then
  say "reading the queue outbox.events (routing keys outbox.event.OrderCreated and outbox.event.OrderPaid)"
  : > "$WORK/records.txt"
  deadline=$((SECONDS + 60))
  while [ "$(wc -l < "$WORK/records.txt")" -lt "$EVENTS" ] && [ $SECONDS -lt $deadline ]; do
    rmq_tool drain outbox.events >> "$WORK/records.txt" || true
    sleep 0.2
  done
  head -n 3 "$WORK/records.txt" | cut -c1-300; echo "   ..."
  got=$(grep -c '"routing_key": "outbox.event' "$WORK/records.txt" || true)
elif [ "$SINK" = nats ]; then
  say "reading the stream OUTBOX (subjects outbox.event.OrderCreated and outbox.event.OrderPaid)"
  : > "$WORK/records.txt"
  deadline=$((SECONDS + 60))
  while [ "$(wc -l < "$WORK/records.txt")" -lt "$EVENTS" ] && [ $SECONDS -lt $deadline ]; do
    nats_tool read OUTBOX > "$WORK/records.txt" || true
    sleep 0.2
  done
  head -n 3 "$WORK/records.txt" | cut -c1-300; echo "   ..."
  got=$(grep -c '"subject": "outbox.event' "$WORK/records.txt" || true)
elif [ "$SINK" = http ]; then
  say "waiting for the POSTs to /events/OrderCreated and /events/OrderPaid"
  for _ in $(seq 1 600); do [ "$(grep -c '^/events/' "$WORK/requests.txt")" -ge "$EVENTS" ] && break; sleep 0.1; done
  cp "$WORK/requests.txt" "$WORK/records.txt"
  head -n 6 "$WORK/records.txt"; echo "   ..."
  got=$(grep -c '^/events/' "$WORK/records.txt" || true)
else
say "reading the topics outbox.event.OrderCreated and outbox.event.OrderPaid"
"$CONSUME" --bootstrap "$KAFKA_BOOTSTRAP" --topic outbox.event.OrderCreated --topic outbox.event.OrderPaid \
  --count "$EVENTS" --timeout-ms 60000 > "$WORK/records.txt" || true
head -n 6 "$WORK/records.txt"; echo "   ..."
got=$(grep -c '^outbox.event' "$WORK/records.txt" || true)
fi
t_arrived=$(date +%s.%N)
if grep -q rolled-back "$WORK/records.txt"; then echo "quickstart: a rolled-back event arrived" >&2; exit 1; fi

say "stopping the relay (SIGTERM)"
kill -TERM "$relay_pid"; wait "$relay_pid"; rc=$?; relay_pid=""
psql -c "SELECT slot_name, confirmed_flush_lsn, pg_current_wal_lsn() FROM pg_replication_slots"
t1=$(date +%s.%N)
printf '==> %d of %d events arrived in %.2f s after the insert; relay exit code %d; quickstart took %.1f s\n' \
  "$got" "$EVENTS" "$(echo "$t_arrived - $t_insert" | bc)" "$rc" "$(echo "$t1 - $t0" | bc)"
[ "$got" = "$EVENTS" ] && [ "$rc" = 0 ]
