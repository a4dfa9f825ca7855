#!/usr/bin/env bash
# Builds PostgreSQL 17 from Debian trixie's *source* package (no trixie binaries) into the cache, for the
# version-matrix tests (scripts/test-matrix.sh). Its build dependencies are Debian bookworm binary packages. Done
# once: a stamp file marks the prefix built. Prints PG_BIN=<prefix>/bin (what scripts/pg-temp.sh and the tests take).
#
#   scripts/install-pg17.sh
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/versions.sh
source "$HERE/versions.sh"
# shellcheck source=scripts/lib.sh
source "$HERE/lib.sh"

log() { echo "[install-pg17] $*"; }
# Enough for the server, its client programs (pg_ctl, initdb, pg_basebackup, psql) and pgoutput: no ICU, no
# readline (psql is used only non-interactively), zlib for pg_basebackup's compression, OpenSSL for the TLS tests.
CONFIGURE_FLAGS=(--without-icu --without-readline --with-zlib --with-ssl=openssl)
# The stamp holds the version and the flags it was built with: a change of either rebuilds.
stamp="$PG17_PREFIX/.built"
built_as="$PG17_DEBIAN_VERSION ${CONFIGURE_FLAGS[*]}"

if [ "$(cat "$stamp" 2>/dev/null)" != "$built_as" ]; then
  apt_install_missing install-pg17 build-essential dpkg-dev ca-certificates bison flex perl pkg-config zlib1g-dev \
    libssl-dev
  log "building PostgreSQL $PG17_DEBIAN_VERSION from Debian trixie's source package into $PG17_PREFIX"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  trixie_source postgresql-17 "$PG17_DEBIAN_VERSION" "$work" "$PG17_DSC_SHA256"
  rm -rf "$PG17_PREFIX"
  (cd "$work/src" && ./configure --prefix="$PG17_PREFIX" "${CONFIGURE_FLAGS[@]}" > "$work/configure.log" 2>&1) ||
    { tail -30 "$work/configure.log" >&2; echo "configure failed" >&2; exit 1; }
  (cd "$work/src" && make -j"$(nproc)" > "$work/make.log" 2>&1 && make install > "$work/install.log" 2>&1) ||
    { tail -40 "$work/make.log" "$work/install.log" >&2; echo "PostgreSQL build failed" >&2; exit 1; }
  echo "$built_as" > "$stamp"
else
  log "PostgreSQL $PG17_DEBIAN_VERSION present in $PG17_PREFIX"
fi
echo "PG_BIN=$PG17_PREFIX/bin"
