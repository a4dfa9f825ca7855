# Pinned versions and cache locations of the benchmark (sourced after scripts/versions.sh, not run).
DEBEZIUM_VERSION=3.6.1.Final
DEBEZIUM_HOME="$CACHE_ROOT/debezium-${DEBEZIUM_VERSION%.Final}"
DEBEZIUM_PLUGIN_DIR="$DEBEZIUM_HOME/plugins/debezium-connector-postgres"
CONNECT_JAVA_HOME="${CONNECT_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
