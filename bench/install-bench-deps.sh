#!/usr/bin/env bash
# Installs what the benchmark (bench/run.sh) needs beyond scripts/install-deps.sh:
#   - Debian: python3-psycopg2 and python3-matplotlib (the harness and its chart), Java 17 (Kafka Connect)
#   - Debezium's Postgres connector $DEBEZIUM_VERSION (it holds the Outbox Event Router, in
#     debezium-connect-plugins) resolved from Maven Central with mvn into
#     $CACHE_ROOT/debezium-$DEBEZIUM_VERSION/plugins/debezium-connector-postgres/ (a Kafka Connect plugin.path
#     entry).
#   - OpenTelemetry's SDK with its autoconfiguration and logging exporter $OPENTELEMETRY_VERSION (bench/opentelemetry-pom.xml) into
#     $OPENTELEMETRY_LIB, which the side-by-side tests' worker (scripts/connect-temp.sh) puts on its class path.
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

# Resolves bench/<pom> (its @..._VERSION@ placeholder set to <version>) with mvn into <dir>, emptied first, and
# touches <marker> when done, unless <marker> is there; further arguments go to dependency:copy-dependencies.
#   resolve_pom <what> <pom> <version> <dir> <marker> [mvn arguments...]
resolve_pom() {
  local what="$1" pom="$2" version="$3" out="$4" marker="$5" pomdir
  shift 5
  if [ -f "$marker" ]; then
    log "$what present in $out"
    return 0
  fi
  log "resolving $what into $out"
  pomdir="$(mktemp -d)"
  sed -e "s/@[A-Z_]*_VERSION@/$version/g" "$HERE/$pom" > "$pomdir/pom.xml"
  rm -rf "$out"
  mkdir -p "$out"
  (cd "$pomdir" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$out" -DincludeScope=runtime "$@")
  touch "$marker"
  rm -rf "$pomdir"
}

DEB_PACKAGES=(python3 python3-psycopg2 python3-matplotlib openjdk-17-jre-headless maven postgresql-client-15 curl)
apt_install_missing install-bench-deps "${DEB_PACKAGES[@]}"

if [ "$want_debezium" = 1 ]; then
  resolve_kafka_jars "$DEBEZIUM_CONNECT_VERSION" "$DEBEZIUM_CONNECT_LIB" | sed 's/^/[install-bench-deps] /'
  # Kafka's own jars (connect-api, kafka-clients and their compression libraries) come from the Connect runtime's
  # class path, as in a Debezium plugin archive.
  resolve_pom "Debezium's Postgres connector $DEBEZIUM_VERSION" debezium-pom.xml "$DEBEZIUM_VERSION" \
    "$DEBEZIUM_PLUGIN_DIR" "$DEBEZIUM_HOME/.resolved-$DEBEZIUM_VERSION" \
    -DexcludeGroupIds=org.apache.kafka,com.github.luben,org.xerial.snappy,at.yawk.lz4,jakarta.ws.rs,org.slf4j
  resolve_pom "OpenTelemetry's SDK $OPENTELEMETRY_VERSION" opentelemetry-pom.xml "$OPENTELEMETRY_VERSION" \
    "$OPENTELEMETRY_LIB" "$OPENTELEMETRY_LIB/.resolved"
fi
log "done"
