#!/usr/bin/env bash
# Builds a PostgreSQL major version from a Debian *source* package into the cache, for the version-matrix tests
# (scripts/test-matrix.sh): 17 from trixie's postgresql-17, 18 from unstable's (sid) postgresql-18. No binary
# package of those suites is installed; the build dependencies are Debian bookworm binary packages. Done once per
# version: a stamp file marks the prefix built. Prints PG_BIN=<prefix>/bin (what scripts/pg-temp.sh and the tests
# take).
#
#   scripts/install-pg.sh 17|18
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/versions.sh
source "$HERE/versions.sh"
# shellcheck source=scripts/lib.sh
source "$HERE/lib.sh"

major="${1:-}"
case "$major" in
  17) suite=trixie debian_version="$PG17_DEBIAN_VERSION" dsc_sha256="$PG17_DSC_SHA256" prefix="$PG17_PREFIX" ;;
  18) suite=sid debian_version="$PG18_DEBIAN_VERSION" dsc_sha256="$PG18_DSC_SHA256" prefix="$PG18_PREFIX" ;;
  *) echo "install-pg: usage: scripts/install-pg.sh 17|18" >&2; exit 2 ;;
esac
log() { echo "[install-pg$major] $*"; }
# Enough for the server, its client programs (pg_ctl, initdb, pg_basebackup, psql) and pgoutput: no ICU, no
# readline (psql is used only non-interactively), zlib for pg_basebackup's compression, OpenSSL for the TLS tests.
CONFIGURE_FLAGS=(--without-icu --without-readline --with-zlib --with-ssl=openssl)
# The stamp holds the version and the flags it was built with: a change of either rebuilds.
stamp="$prefix/.built"
built_as="$debian_version ${CONFIGURE_FLAGS[*]}"

if [ "$(cat "$stamp" 2>/dev/null)" != "$built_as" ]; then
  apt_install_missing "install-pg$major" build-essential dpkg-dev ca-certificates bison flex perl pkg-config \
    zlib1g-dev libssl-dev
  log "building PostgreSQL $debian_version from Debian $suite's source package into $prefix"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  debian_source "$suite" "postgresql-$major" "$debian_version" "$work" "$dsc_sha256"
  rm -rf "$prefix"
  (cd "$work/src" && ./configure --prefix="$prefix" "${CONFIGURE_FLAGS[@]}" > "$work/configure.log" 2>&1) ||
    { tail -30 "$work/configure.log" >&2; echo "configure failed" >&2; exit 1; }
  (cd "$work/src" && make -j"$(nproc)" > "$work/make.log" 2>&1 && make install > "$work/install.log" 2>&1) ||
    { tail -40 "$work/make.log" "$work/install.log" >&2; echo "PostgreSQL build failed" >&2; exit 1; }
  echo "$built_as" > "$stamp"
else
  log "PostgreSQL $debian_version present in $prefix"
fi
echo "PG_BIN=$prefix/bin"
