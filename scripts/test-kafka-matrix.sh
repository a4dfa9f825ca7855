#!/usr/bin/env bash
# The broker-matrix step of scripts/test.sh: runs the Kafka-facing part of the e2e suite against another Apache
# Kafka broker line (the suite itself runs against scripts/versions.sh's KAFKA_VERSION). Resolves that version's
# jars from Maven Central (scripts/install-deps.sh with OUTBOX_KAFKA_VERSION, cached), starts it as the shared test
# broker with a PostgreSQL of its own, and exports OUTBOX_KAFKA_VERSION so that the tests that start brokers of
# their own (outages, SASL, TLS) get that version too. The build must exist (OUTBOX_BUILD_DIR as in scripts/test.sh).
#
#   scripts/test-kafka-matrix.sh 3.9.1 [ctest arguments]
#
# The subset: the core relay (RelayE2E), kill -9 and broker outages under load, the broker's blackhole and resets,
# a fatal producer error, poison events and dead letters, the checkpoint topic's rules (Gap), SASL and TLS failures
# against real listeners, and the Kafka metrics.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
[ $# -ge 1 ] || { echo "test-kafka-matrix: usage: scripts/test-kafka-matrix.sh VERSION [ctest arguments]" >&2; exit 2; }
export OUTBOX_KAFKA_VERSION="$1"
shift
source "$HERE/versions.sh"
bash "$HERE/install-deps.sh" >/dev/null

BUILD="${OUTBOX_BUILD_DIR:-$ROOT/build}"
[ -f "$BUILD/CTestTestfile.cmake" ] || { echo "test-kafka-matrix: no build in $BUILD (run scripts/test.sh)" >&2; exit 1; }

WORK="$(mktemp -d /tmp/outbox-kafka-matrix.XXXXXX)"
chmod 755 "$WORK"
cleanup() {
  set +e
  bash "$HERE/kafka-temp.sh" stop "$WORK/kafka" >/dev/null 2>&1
  bash "$HERE/pg-temp.sh" stop "$WORK/pg" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

eval "$(bash "$HERE/pg-temp.sh" start "$WORK/pg" | grep '^PGPORT=')"
eval "$(bash "$HERE/kafka-temp.sh" start "$WORK/kafka" | grep '^KAFKA_BOOTSTRAP=')"
export OUTBOX_TEST_PG_PORT="$PGPORT" OUTBOX_TEST_KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP"
echo "broker matrix: Kafka $KAFKA_VERSION on $KAFKA_BOOTSTRAP ($KAFKA_LIB), PostgreSQL on $PGPORT"

SUBSET='^(RelayE2E\.'
SUBSET+='|Reliability\.(KillNineAtRandomMoments|BrokerStoppedAndStarted|BrokerOutageReleases|BlackholedBroker|SlowThenResetBroker|FatalProducerError)'
SUBSET+='|Poison\.|Gap\.ALateLower|KafkaAuth\.|KafkaTls\.|Observability\.)'
cd "$BUILD"
ctest --output-on-failure --timeout 600 -j2 -L e2e -R "$SUBSET" "$@"
