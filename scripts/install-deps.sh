#!/usr/bin/env bash
# Installs everything outbox-relay needs to build and test on a Debian bookworm machine:
#   - Debian packages (compiler, libpq, PostgreSQL 15 and PostGIS for it, abseil, spdlog, nlohmann_json, yaml-cpp, CLI11, httplib,
#     protobuf, mimalloc, gtest)
#   - pgvector for PostgreSQL 15, built from Debian trixie's *source* package (bookworm has no package of it)
#   - librdkafka 2.8.0 built from Debian trixie's *source* package into a cached prefix (no trixie binaries)
#   - a pinned Apache Kafka broker (and its logging jars) resolved from Maven Central with mvn
#   - for the NATS JetStream tests: Debian's nats-server, and nats-py (a reader not built on the NATS C client) in a
#     venv under the cache dir ($NATS_PY_VENV)
#   - for the deployment files' tests: promtool (Debian's prometheus) and Helm built with `go install` from the Go
#     module proxy ($HELM_BIN)
#   - for the RabbitMQ tests: Debian's rabbitmq-server, and pika (a reader not built on librabbitmq) in a venv under
#     the cache dir ($PIKA_VENV)
# Idempotent: every step is skipped when its result is already there. Used by README, .ci/run and docker/.
#
#   scripts/install-deps.sh [--no-kafka]
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/versions.sh
source "$HERE/versions.sh"
# shellcheck source=scripts/lib.sh
source "$HERE/lib.sh"

want_kafka=1
for a in "$@"; do
  case "$a" in
    --no-kafka) want_kafka=0 ;;
    *) echo "install-deps: unknown option $a" >&2; exit 2 ;;
  esac
done

log() { echo "[install-deps] $*"; }

DEB_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates ccache
  libpq-dev postgresql-15 postgresql-client-15
  # PostGIS for the Debezium side-by-side tests of geometry and geography columns; the server's headers to build
  # pgvector for them (below)
  postgresql-15-postgis-3 postgresql-server-dev-15
  libabsl-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libcpp-httplib-dev
  libprotobuf-dev protobuf-compiler
  libnats-dev librabbitmq-dev
  # the relay's malloc (OUTBOX_ALLOCATOR in CMakeLists.txt)
  libmimalloc-dev
  libgtest-dev libgmock-dev googletest
  clang libclang-rt-14-dev llvm
  libpcre2-dev libicu-dev
  maven openjdk-17-jdk-headless bc procps iproute2
  dpkg-dev devscripts
  # librdkafka's build dependencies (from its debian/control)
  zlib1g-dev libssl-dev libsasl2-dev liblz4-dev libzstd-dev libcurl4-openssl-dev python3
)

if [ "$want_kafka" = 1 ]; then DEB_PACKAGES+=(nats-server rabbitmq-server python3-venv prometheus python3-yaml systemd); fi
# The HTTP sink's HTTPS tests: Debian's nginx in front of the tests' receiver (scripts/nginx-temp.sh), openssl for
# the throwaway CA.
DEB_PACKAGES+=(nginx openssl)
apt_install_missing install-deps "${DEB_PACKAGES[@]}"

# ---- librdkafka from unstable's (sid) source package -------------------------------------------
# Debian's three patches only make its own build use the system's nanopb, cJSON and opentelemetry-proto (the
# generated headers' paths change with them); this build uses the copies upstream ships, so it takes the upstream
# release without them.
if [ ! -f "$RDKAFKA_PREFIX/.built-$RDKAFKA_VERSION" ]; then
  log "building librdkafka $RDKAFKA_VERSION from Debian sid's source package into $RDKAFKA_PREFIX"
  work="$(mktemp -d)"
  DEBIAN_SOURCE_SKIP_PATCHES=1 debian_source sid librdkafka "$RDKAFKA_DEBIAN_VERSION" "$work" "$RDKAFKA_DSC_SHA256"
  (cd "$work/src" && ./configure --prefix="$RDKAFKA_PREFIX" --disable-debug-symbols --enable-lz4-ext --enable-zstd \
      --enable-ssl --enable-sasl --disable-curl >/dev/null \
   && make -j"$(nproc)" libs >/dev/null 2>&1 && make install-subdirs >/dev/null 2>&1 || \
   { echo "librdkafka build failed" >&2; exit 1; })
  touch "$RDKAFKA_PREFIX/.built-$RDKAFKA_VERSION"
  rm -rf "$work"
else
  log "librdkafka $RDKAFKA_VERSION present in $RDKAFKA_PREFIX"
fi

# ---- pgvector for Debian's PostgreSQL 15, from trixie's source package -----------------------------
# For the Debezium side-by-side tests of vector, halfvec and sparsevec columns. Built with PGXS against PostgreSQL 15's
# headers (no -march=native: OPTFLAGS empty) and installed into its library and extension directories, where
# CREATE EXTENSION finds it.
PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config
if [ ! -f "$("$PG15_CONFIG" --sharedir)/extension/vector--$PGVECTOR_VERSION.sql" ]; then
  log "building pgvector $PGVECTOR_VERSION from Debian trixie's source package for PostgreSQL 15"
  work="$(mktemp -d)"
  trixie_source pgvector "$PGVECTOR_DEBIAN_VERSION" "$work" "$PGVECTOR_DSC_SHA256"
  (cd "$work/src" && make -j"$(nproc)" PG_CONFIG="$PG15_CONFIG" OPTFLAGS="" >"$work/build.log" 2>&1 &&
   $SUDO make install PG_CONFIG="$PG15_CONFIG" OPTFLAGS="" >>"$work/build.log" 2>&1) ||
    { tail -30 "$work/build.log" >&2; echo "pgvector build failed" >&2; exit 1; }
  rm -rf "$work"
else
  log "pgvector $PGVECTOR_VERSION present for PostgreSQL 15"
fi

# ---- Apache Kafka broker jars from Maven Central ---------------------------------------------
if [ "$want_kafka" = 1 ]; then
  resolve_kafka_jars "$KAFKA_VERSION" "$KAFKA_LIB" | sed 's/^/[install-deps] /'
fi
# ---- the tests' readers from PyPI, each in a venv of its own (clients not built on the C libraries the relay uses)
# py_venv PACKAGE VERSION VENV: pip-installs PACKAGE==VERSION into VENV, unless that version is there already.
py_venv() {
  local package="$1" version="$2" venv="$3"
  if [ -f "$venv/.installed-$version" ]; then
    log "$package $version present in $venv"
    return 0
  fi
  log "installing $package $version into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "$package==$version"
  touch "$venv/.installed-$version"
}
if [ "$want_kafka" = 1 ]; then
  py_venv nats-py "$NATS_PY_VERSION" "$NATS_PY_VENV"  # the NATS tests' reader
  py_venv pika "$PIKA_VERSION" "$PIKA_VENV"           # the RabbitMQ tests' reader
fi
# ---- Helm, for the chart's tests (tests/deploy) -------------------------------------------------
if [ "$want_kafka" = 1 ]; then
  if [ ! -x "$HELM_BIN" ]; then
    # The machine's Go (its image puts it in /usr/local/go, on PATH only for login shells).
    GO="$(command -v go || true)"
    if [ -z "$GO" ] && [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go; fi
    [ -n "$GO" ] || { echo "install-deps: Helm is built with Go, and there is no go on PATH or in /usr/local/go" >&2; exit 1; }
    log "building Helm $HELM_VERSION from the Go module proxy with $("$GO" version) into $(dirname "$HELM_BIN")"
    mkdir -p "$(dirname "$HELM_BIN")"
    GOBIN="$(dirname "$HELM_BIN")" "$GO" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  else
    log "Helm $HELM_VERSION present in $(dirname "$HELM_BIN")"
  fi
fi
log "done"
