#!/usr/bin/env bash
# The version-matrix steps of scripts/test.sh: a subset of the e2e suite against another PostgreSQL version or
# another Apache Kafka broker line. The build must exist (scripts/test.sh makes it; OUTBOX_BUILD_DIR as there).
#
#   scripts/test-matrix.sh 17|18 [ctest arguments]           PostgreSQL 17 or 18
#   scripts/test-matrix.sh kafka-VERSION [ctest arguments]   a Kafka broker of VERSION, e.g. kafka-3.9.1
#
# PostgreSQL: builds that server (scripts/install-pg.sh, cached after the first time), starts it as the shared test
# server with PG_BIN pointing at it (tests that start servers of their own get it too), and uses the shared Kafka
# broker of scripts/test.sh (OUTBOX_TEST_KAFKA_BOOTSTRAP), or starts one. The subset: the core relay (RelayE2E:
# delivery, ordering, restarts, idle advancement, --start-lsn), the short reliability forms that kill the relay,
# PostgreSQL or the replication connection, streaming (protocol 2), logical decoding messages, gap and lost-slot
# detection, status and check, TLS to PostgreSQL, and the server-version tests: failover slots and a real failover
# (tests/e2e/server_versions_test.cc), which need 17 and skip on 15, several pipelines in one process, and the
# publication watch (on 18 a dropped publication only makes pgoutput warn and skip it: the stream alone cannot
# tell), and a restart after the outbox's layout changed with events before the change in the slot (the relay runs
# no SQL on its replication connection, whose walsender would decode with the relcache entries SQL leaves).
# LostSlot's idle_replication_slot_timeout test needs 18.
#
# Kafka: resolves that version's jars from Maven Central (scripts/install-deps.sh with OUTBOX_KAFKA_VERSION,
# cached), starts it as the shared test broker with a PostgreSQL of its own, and exports OUTBOX_KAFKA_VERSION so
# that the tests that start brokers of their own (outages, SASL, TLS) get that version too. The subset: the core
# relay, kill -9 and broker outages under load, the broker's blackhole, slow link and resets, a fatal producer
# error, poison events and dead letters, the checkpoint topic's highest-LSN rule, SASL and TLS failures against
# real listeners, the metrics, and exactly_once under kill -9, a broker outage, a foreign transaction open on the
# checkpoint topic and a transaction the coordinator aborts.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
usage() {
  echo "test-matrix: usage: scripts/test-matrix.sh 17|18|kafka-VERSION [ctest arguments] (15 is Debian's own)" >&2
  exit 2
}

version="${1:-}"
[ $# -gt 0 ] && shift
case "$version" in
  17|18)
    source "$HERE/versions.sh"
    eval "$(bash "$HERE/install-pg.sh" "$version" | grep '^PG_BIN=')"
    export PG_BIN
    SUBSET='^(RelayE2E\.'
    SUBSET+='|Reliability\.(KillNineAtRandomMoments|PostgresStoppedImmediately|LostReplicationConnections)'
    SUBSET+='|Streaming\.Interleaved|Messages\.|Gap\.|LostSlot\.|StatusCheck\.|Tls\.'
    SUBSET+='|PipelinesTest\.|ServerVersions\.|FailoverSlots\.|Failover\.|Publication\.|SlotHealth\.'
    SUBSET+='|ExactlyOnce\.PostgresStoppedImmediately|Payloads\.AnEventWrittenBeforeTheOutboxsLayoutChanged)'
    ;;
  kafka-?*)
    export OUTBOX_KAFKA_VERSION="${version#kafka-}"
    source "$HERE/versions.sh"
    bash "$HERE/install-deps.sh" >/dev/null
    unset OUTBOX_TEST_KAFKA_BOOTSTRAP  # a broker of that version, never the suite's
    SUBSET='^(RelayE2E\.'
    SUBSET+='|Reliability\.(KillNineAtRandomMoments|BrokerStoppedAndStarted|BrokerOutageReleases|BlackholedBroker'
    SUBSET+='|SlowThenResetBroker|FatalProducerError)'
    SUBSET+='|Poison\.|Gap\.ALateLower|KafkaAuth\.|KafkaTls\.|Observability\.'
    SUBSET+='|ExactlyOnce\.(KillNineAtRandomMoments|BrokerStoppedAndStarted|AForeignTransaction|ATransactionTheCoordinator))'
    ;;
  *) usage ;;
esac

BUILD="${OUTBOX_BUILD_DIR:-$ROOT/build}"
[ -f "$BUILD/CTestTestfile.cmake" ] || { echo "test-matrix: no build in $BUILD (run scripts/test.sh)" >&2; exit 1; }

WORK="$(mktemp -d /tmp/outbox-matrix.XXXXXX)"
chmod 755 "$WORK"
own_kafka=0
cleanup() {
  set +e
  [ "$own_kafka" = 0 ] || bash "$HERE/kafka-temp.sh" stop "$WORK/kafka" >/dev/null 2>&1
  bash "$HERE/pg-temp.sh" stop "$WORK/pg" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

eval "$(bash "$HERE/pg-temp.sh" start "$WORK/pg" | grep '^PGPORT=')"
if [ -z "${OUTBOX_TEST_KAFKA_BOOTSTRAP:-}" ]; then
  own_kafka=1
  eval "$(bash "$HERE/kafka-temp.sh" start "$WORK/kafka" | grep '^KAFKA_BOOTSTRAP=')"
  export OUTBOX_TEST_KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP"
fi
export OUTBOX_TEST_PG_PORT="$PGPORT"
pg="Debian's PostgreSQL"
[ -z "${PG_BIN:-}" ] || pg="PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') ($PG_BIN)"
echo "version matrix ($version): $pg on $PGPORT, Kafka $KAFKA_VERSION on $OUTBOX_TEST_KAFKA_BOOTSTRAP ($KAFKA_LIB)"

cd "$BUILD"
ctest --output-on-failure --timeout 600 -j2 -L e2e -R "$SUBSET" "$@"
