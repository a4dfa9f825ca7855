# Pinned versions and cache locations of the benchmark (sourced after scripts/versions.sh, not run).
DEBEZIUM_VERSION=3.6.1.Final
DEBEZIUM_HOME="$CACHE_ROOT/debezium-${DEBEZIUM_VERSION%.Final}"
DEBEZIUM_PLUGIN_DIR="$DEBEZIUM_HOME/plugins/debezium-connector-postgres"
# Kafka Connect for Debezium (the side-by-side test and the benchmark): the newest Kafka line that Debezium
# $DEBEZIUM_VERSION runs on. Connect 4.2 and later lack org.apache.kafka.common.utils.Sanitizer, which Debezium's
# connector still loads, so Connect stays on 4.1 while the test broker is newer (scripts/versions.sh).
DEBEZIUM_CONNECT_VERSION=4.1.1
DEBEZIUM_CONNECT_LIB="$CACHE_ROOT/kafka-$DEBEZIUM_CONNECT_VERSION/lib"
# OpenTelemetry's SDK with its autoconfiguration (bench/opentelemetry-pom.xml) on the side-by-side tests' worker's class
# path: with it, Debezium's Outbox Event Router traces the records whose row has a trace context (tracingspancontext).
OPENTELEMETRY_VERSION=1.68.0
OPENTELEMETRY_LIB="$CACHE_ROOT/opentelemetry-$OPENTELEMETRY_VERSION"
CONNECT_JAVA_HOME="${CONNECT_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
