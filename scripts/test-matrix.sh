#!/usr/bin/env bash
# The version-matrix step of scripts/test.sh: runs a subset of the e2e suite against another PostgreSQL version.
# Builds that server (cached after the first time), starts it as the shared test server, and uses the shared Kafka
# broker of scripts/test.sh (OUTBOX_TEST_KAFKA_BOOTSTRAP), or starts one. The build must exist (scripts/test.sh
# makes it; OUTBOX_BUILD_DIR as there).
#
#   scripts/test-matrix.sh 17|18 [ctest arguments]
#
# The subset: the core relay (RelayE2E: delivery, ordering, restarts, idle advancement, --start-lsn), the short
# reliability forms that kill the relay, PostgreSQL or the replication connection, streaming (protocol 2), logical
# decoding messages, gap and lost-slot detection, status and check, TLS to PostgreSQL, and the server-version tests:
# failover slots and a real failover (tests/e2e/server_versions_test.cc), which need 17 and skip on 15, several
# pipelines in one process, and the publication watch (on 18 a dropped publication only makes pgoutput warn and
# skip it: the stream alone cannot tell). LostSlot's idle_replication_slot_timeout test needs 18.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
source "$HERE/versions.sh"

version="${1:-}"
[ $# -gt 0 ] && shift
case "$version" in
  17|18) eval "$(bash "$HERE/install-pg.sh" "$version" | grep '^PG_BIN=')" ;;
  *) echo "test-matrix: usage: scripts/test-matrix.sh 17|18 [ctest arguments] (15 is Debian's own)" >&2; exit 2 ;;
esac
export PG_BIN

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
echo "version matrix: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on $PGPORT ($PG_BIN)," \
     "Kafka on $OUTBOX_TEST_KAFKA_BOOTSTRAP"

SUBSET='^(RelayE2E\.'
SUBSET+='|Reliability\.(KillNineAtRandomMoments|PostgresStoppedImmediately|LostReplicationConnections)'
SUBSET+='|Streaming\.Interleaved|Messages\.|Gap\.|LostSlot\.|StatusCheck\.|Tls\.'
SUBSET+='|PipelinesTest\.|ServerVersions\.|FailoverSlots\.|Failover\.|Publication\.|SlotHealth\.)'
cd "$BUILD"
ctest --output-on-failure --timeout 600 -j2 -L e2e -R "$SUBSET" "$@"
