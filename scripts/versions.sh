# Pinned versions and cache locations shared by every script (sourced, not run).
# librdkafka from Debian unstable's (sid) source package (scripts/install-deps.sh), pinned by its .dsc hash.
RDKAFKA_VERSION=2.14.2
RDKAFKA_DEBIAN_VERSION=2.14.2-1
RDKAFKA_DSC_SHA256=fafd510fdb29c4cf7732e115a416d93a5a3af4a1b3bd2b0c7731042d653d85ee
# The test broker from Maven Central; OUTBOX_KAFKA_VERSION picks another (scripts/test-matrix.sh kafka-VERSION: 3.9.x).
KAFKA_VERSION="${OUTBOX_KAFKA_VERSION:-4.4.0}"
KAFKA_MATRIX_VERSION=3.9.1
LOG4J_VERSION=2.25.3
DEBIAN_MIRROR="${OUTBOX_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE_ROOT="${OUTBOX_RELAY_CACHE:-$HOME/.cache/outbox-relay}"
RDKAFKA_PREFIX="$CACHE_ROOT/librdkafka-$RDKAFKA_VERSION"
KAFKA_LIB="$CACHE_ROOT/kafka-$KAFKA_VERSION/lib"
# The NATS tests read the stream back with nats-py (not built on the NATS C client the relay uses).
NATS_PY_VERSION=2.15.0
NATS_PY_VENV="$CACHE_ROOT/nats-py-$NATS_PY_VERSION"
# The RabbitMQ tests read the queues back with pika (not built on librabbitmq, which the relay uses).
PIKA_VERSION=1.3.2
PIKA_VENV="$CACHE_ROOT/pika-$PIKA_VERSION"
# PostgreSQL 17 and 18 for the version-matrix tests (scripts/install-pg.sh builds 17 from trixie's source package,
# 18 from unstable's). The mirror's index may list a newer upload than its pool serves; the pinned .dsc hash lets
# the build fetch this one from the pool (scripts/lib.sh, debian_source).
PG17_VERSION=17.11
PG17_DEBIAN_VERSION=17.11-0+deb13u1
PG17_DSC_SHA256=bf148ae423a982707c3f60672c3a072ef62b701bd9f5df847d9f4b8c9b3e3b18
PG18_VERSION=18.6
PG18_DEBIAN_VERSION=18.6-3
PG18_DSC_SHA256=a4254c4548ebeea683832de193460ee8a9f1271418e884803b44ded1aead1776
# pgvector for Debian's PostgreSQL 15 (the Debezium side-by-side tests of vector, halfvec and sparsevec columns):
# bookworm has no package of it, so scripts/install-deps.sh builds trixie's source package against PostgreSQL 15.
PGVECTOR_VERSION=0.8.0
PGVECTOR_DEBIAN_VERSION=0.8.0-1
PGVECTOR_DSC_SHA256=a71780bf7ab9901094a3d9869c489b6e2bcb858a8c14a5fa52d159933e016308
# Their servers run as an unprivileged user when the tests run as root (scripts/pg-temp.sh), and that user cannot
# enter root's home: as root (without OUTBOX_RELAY_CACHE) they are kept under /var/cache/outbox-relay instead.
PG_BUILD_CACHE_ROOT="$CACHE_ROOT"
if [ -z "${OUTBOX_RELAY_CACHE:-}" ] && [ "$(id -u)" = 0 ]; then PG_BUILD_CACHE_ROOT=/var/cache/outbox-relay; fi
PG17_PREFIX="$PG_BUILD_CACHE_ROOT/postgresql-$PG17_VERSION"
PG18_PREFIX="$PG_BUILD_CACHE_ROOT/postgresql-$PG18_VERSION"
# The deployment files' tests (tests/deploy): Helm built from the Go module proxy with the machine's Go, and
# promtool from Debian's prometheus package.
HELM_VERSION=v3.22.0
HELM_BIN="$CACHE_ROOT/helm-$HELM_VERSION/bin/helm"
