#!/usr/bin/env bash
# Installs what the benchmark (bench/run.sh) needs beyond scripts/install-deps.sh:
#   - Debian: python3-psycopg2 and python3-matplotlib (the harness and its chart), Java 17 (Kafka Connect)
#   - Debezium's Postgres connector $DEBEZIUM_VERSION (it holds the Outbox Event Router, in
#     debezium-connect-plugins) resolved from Maven Central with mvn into
#     $CACHE_ROOT/debezium-$DEBEZIUM_VERSION/plugins/debezium-connector-postgres/ (a Kafka Connect plugin.path
#     entry).
#   - The Kafka Connect runtime it runs in: Kafka $DEBEZIUM_CONNECT_VERSION's jars (bench/bench-versions.sh says why
#     not the test broker's version) in $DEBEZIUM_CONNECT_LIB, the same way scripts/install-deps.sh resolves the
#     broker's.
# Idempotent; nothing lands in the repository (jars stay in the cache).
#
#   bench/install-bench-deps.sh [--no-debezium]
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
# shellcheck source=scripts/versions.sh
source "$ROOT/scripts/versions.sh"
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
# shellcheck source=bench/bench-versions.sh
source "$HERE/bench-versions.sh"

want_debezium=1
for a in "$@"; do
  case "$a" in
    --no-debezium) want_debezium=0 ;;
    *) echo "install-bench-deps: unknown option $a" >&2; exit 2 ;;
  esac
done

log() { echo "[install-bench-deps] $*"; }

DEB_PACKAGES=(python3 python3-psycopg2 python3-matplotlib openjdk-17-jre-headless maven postgresql-client-15 curl)
apt_install_missing install-bench-deps "${DEB_PACKAGES[@]}"

if [ "$want_debezium" = 1 ]; then
  resolve_kafka_jars "$DEBEZIUM_CONNECT_VERSION" "$DEBEZIUM_CONNECT_LIB" | sed 's/^/[install-bench-deps] /'
  if [ ! -f "$DEBEZIUM_HOME/.resolved-$DEBEZIUM_VERSION" ]; then
    log "resolving io.debezium:debezium-connector-postgres:$DEBEZIUM_VERSION into $DEBEZIUM_PLUGIN_DIR"
    pomdir="$(mktemp -d)"
    sed -e "s/@DEBEZIUM_VERSION@/$DEBEZIUM_VERSION/g" "$HERE/debezium-pom.xml" > "$pomdir/pom.xml"
    rm -rf "$DEBEZIUM_PLUGIN_DIR"
    mkdir -p "$DEBEZIUM_PLUGIN_DIR"
    # Kafka's own jars (connect-api, kafka-clients and their compression libraries) come from the Connect
    # runtime's class path, as in a Debezium plugin archive.
    (cd "$pomdir" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$DEBEZIUM_PLUGIN_DIR" \
        -DincludeScope=runtime -DexcludeGroupIds=org.apache.kafka,com.github.luben,org.xerial.snappy,at.yawk.lz4,jakarta.ws.rs,org.slf4j)
    touch "$DEBEZIUM_HOME/.resolved-$DEBEZIUM_VERSION"
    rm -rf "$pomdir"
  else
    log "Debezium $DEBEZIUM_VERSION present in $DEBEZIUM_PLUGIN_DIR"
  fi
fi
log "done"
