# Pinned versions and cache locations shared by every script (sourced, not run).
RDKAFKA_VERSION=2.8.0
RDKAFKA_DEBIAN_VERSION=2.8.0-1
KAFKA_VERSION=4.1.1
LOG4J_VERSION=2.25.3
CACHE_ROOT="${OUTBOX_RELAY_CACHE:-$HOME/.cache/outbox-relay}"
RDKAFKA_PREFIX="$CACHE_ROOT/librdkafka-$RDKAFKA_VERSION"
KAFKA_LIB="$CACHE_ROOT/kafka-$KAFKA_VERSION/lib"
