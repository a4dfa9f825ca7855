# Shell functions shared by the install scripts (sourced, not run). Needs scripts/versions.sh sourced first.
#
#   apt_install_missing LOG_TAG PACKAGE...     apt-get install the Debian packages that are not installed yet
#   debian_source SUITE PACKAGE VERSION DEST   download and unpack a Debian suite's *source* package into DEST
#   trixie_source PACKAGE VERSION DEST         the same for trixie
#   free_port [EXCLUDE]                        print a free TCP port on 127.0.0.1 (the *-temp.sh server scripts)
#   use_compiler_cache ROOT                    COMPILER_CACHE_ARGS: cmake arguments that compile through ccache
#   make_test_certs DIR                        a throwaway CA and, signed by it, a server certificate for localhost and
#                                              127.0.0.1 and a client certificate, in DIR (the *-temp.sh TLS servers)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

apt_install_missing() {
  local tag="$1" p
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "[$tag] installing Debian packages: ${missing[*]}"
    # Waits for another apt run (a second install script on the same machine) instead of failing on its lock.
    $SUDO apt-get -o DPkg::Lock::Timeout=900 update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends \
      "${missing[@]}"
  else
    echo "[$tag] Debian packages present"
  fi
}

# A private apt configuration under DEST/apt that knows only SUITE's deb-src lines (trixie, or sid for what only
# unstable carries), so no binary package of that suite can ever be installed through it; the machine's own apt
# configuration is not touched. DEST/src is the unpacked tree. apt verifies the source files against the suite's
# signed index. When that index no longer lists VERSION (the archive moved on, or a mirror lags behind its index)
# and DSC_SHA256 is given, the .dsc comes from the pool directly, checked against that pinned hash, and dpkg-source
# checks the tarballs against the .dsc's own hashes. Needs dpkg-dev (dpkg-source) and apt's apt-helper.
debian_source() {
  local suite="$1" pkg="$2" version="$3" dest="$4" dsc_sha256="${5:-}"
  local apt="$dest/apt" dsc="${pkg}_${version#*:}.dsc"
  mkdir -p "$apt/lists/partial" "$apt/sources.list.d" "$apt/cache/archives/partial"
  case "$suite" in
    sid) echo "deb-src $DEBIAN_MIRROR sid main" > "$apt/sources.list" ;;
    *) printf '%s\n' "deb-src $DEBIAN_MIRROR $suite main" "deb-src $DEBIAN_MIRROR $suite-updates main" \
         "deb-src ${DEBIAN_MIRROR}-security $suite-security main" > "$apt/sources.list" ;;
  esac
  local apt_opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
                  -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Get::List-Cleanup=0")
  apt-get "${apt_opts[@]}" update -q
  if ! (cd "$dest" && apt-get "${apt_opts[@]}" source --download-only "$pkg=$version" 2>&1 | tail -3 &&
        [ -f "$dsc" ]); then
    [ -n "$dsc_sha256" ] || { echo "debian_source: $pkg $version is not available" >&2; return 1; }
    local pool="$DEBIAN_MIRROR/pool/main/${pkg:0:1}/$pkg" hash size file
    [[ "$pkg" != lib* ]] || pool="$DEBIAN_MIRROR/pool/main/${pkg:0:4}/$pkg"
    echo "debian_source: $pkg $version is not in the index; fetching its pinned .dsc from $pool"
    /usr/lib/apt/apt-helper download-file "$pool/$dsc" "$dest/$dsc" "SHA256:$dsc_sha256" 2>&1 | grep -v '^W:' || true
    [ -f "$dest/$dsc" ] || { echo "debian_source: could not fetch $pool/$dsc" >&2; return 1; }
    while read -r hash size file; do
      /usr/lib/apt/apt-helper download-file "$pool/$file" "$dest/$file" "SHA256:$hash" 2>&1 | grep -v '^W:' || true
      [ -f "$dest/$file" ] || { echo "debian_source: could not fetch $pool/$file" >&2; return 1; }
    done < <(sed -n '/^Checksums-Sha256:/,/^[A-Z]/{/^ /p}' "$dest/$dsc")
  fi
  # DEBIAN_SOURCE_SKIP_PATCHES=1: the upstream release as published, without Debian's patches (for a package whose
  # patches only fit Debian's own build, such as librdkafka's switch to system nanopb and opentelemetry-proto).
  local skip=()
  [ "${DEBIAN_SOURCE_SKIP_PATCHES:-0}" != 1 ] || skip=(--skip-patches)
  (cd "$dest" && dpkg-source --no-check "${skip[@]}" -x "./$dsc" src >/dev/null)
}
trixie_source() { debian_source trixie "$@"; }

# resolve_kafka_jars VERSION DEST: org.apache.kafka:kafka_2.13:VERSION (the broker, Kafka Connect's runtime, the
# tools) and its runtime dependencies with log4j 2, from Maven Central into DEST through mvn (scripts/kafka-pom.xml).
# Done once per DEST: a stamp file marks it resolved.
resolve_kafka_jars() {
  local version="$1" dest="$2" pomdir
  if [ -f "$dest/.resolved-$version" ]; then
    echo "Kafka $version jars present in $dest"
    return 0
  fi
  echo "resolving org.apache.kafka:kafka_2.13:$version into $dest"
  pomdir="$(mktemp -d)"
  sed -e "s/@KAFKA_VERSION@/$version/g" -e "s/@LOG4J_VERSION@/$LOG4J_VERSION/g" \
      "$(dirname "${BASH_SOURCE[0]}")/kafka-pom.xml" > "$pomdir/pom.xml"
  mkdir -p "$dest"
  (cd "$pomdir" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$dest" -DincludeScope=runtime) ||
    { rm -rf "$pomdir"; return 1; }
  touch "$dest/.resolved-$version"
  rm -rf "$pomdir"
}

# A port below the ephemeral range (so client sockets do not take it between the check and the bind), not in use,
# and not EXCLUDE (a port just picked for another listener of the same server). The server scripts bind it and
# retry with another when the bind fails (another process may take it between the pick and the bind).
free_port() {
  local lo=20000 hi=32767 p i eph_lo=""
  if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
    read -r eph_lo _ < /proc/sys/net/ipv4/ip_local_port_range || true
    if [ -n "${eph_lo:-}" ] && [ "$eph_lo" -gt $((lo + 1000)) ]; then hi=$((eph_lo - 1)); fi
  fi
  for i in $(seq 1 200); do
    p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
    [ "$p" != "${1:-}" ] || continue
    if command -v ss >/dev/null 2>&1; then
      [ -z "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ] || continue
    fi
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "free_port: no free port found" >&2
  return 1
}

# kill_with_owner OWNER PID NAME: a detached watchdog (named NAME in ps, stdio closed: the caller may read our stdout
# until EOF) SIGKILLs PID once process OWNER is gone; it ends with either. Nothing when OWNER is empty. For servers a
# test fixture starts (KAFKA_TEMP_OWNER_PID, CONNECT_TEMP_OWNER_PID).
kill_with_owner() {
  local owner="$1" pid="$2" name="$3"
  [ -n "$owner" ] || return 0
  setsid bash -c '
    owner=$1; pid=$2
    while kill -0 "$owner" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 1; done
    kill -KILL "$pid" 2>/dev/null || true' \
    "$name" "$owner" "$pid" </dev/null >/dev/null 2>&1 &
}

# Sets COMPILER_CACHE_ARGS to the cmake arguments that put ccache (scripts/install-deps.sh installs it) in front of
# the compilers, and exports its settings, for the build of the checkout at ROOT; empty when ccache is absent or
# OUTBOX_CCACHE=0.
# The cache (ccache's own, ~/.cache/ccache by default, at most CCACHE_MAXSIZE, 8G here) outlives the checkout: a
# fresh clone in another directory compiles what did not change from it, as paths under ROOT are made relative
# (CCACHE_BASEDIR) and the build dir is left out of the hash (CCACHE_NOHASHDIR; the debug information of an object
# from the cache may then name the directory it was first built in). A build dir configured without the launcher
# is rebuilt once with it.
use_compiler_cache() {
  COMPILER_CACHE_ARGS=()
  [ "${OUTBOX_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1 || return 0
  export CCACHE_BASEDIR="$1" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
  COMPILER_CACHE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
}

# A throwaway CA (DIR/ca.{crt,key}) and two certificates it signs: DIR/server.{crt,key} for localhost and 127.0.0.1
# (an IP SAN, and the same text as a DNS SAN for the clients that match the URL's host as a name), and
# DIR/client.{crt,key} for servers that want a client certificate. Made once: kept when DIR/client.crt exists.
# Valid for 2 days; never trusted anywhere but in the test that made them.
make_test_certs() {
  local dir="$1" name
  [ -f "$dir/client.crt" ] && return 0
  mkdir -p "$dir"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 2 \
    -subj "/CN=outbox-relay test CA $(basename "$dir")" >/dev/null 2>&1 ||
    { echo "openssl could not make the CA" >&2; return 1; }
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:127.0.0.1\n' > "$dir/server.ext"
  printf 'extendedKeyUsage=clientAuth\n' > "$dir/client.ext"
  for name in server client; do
    openssl req -newkey rsa:2048 -nodes -keyout "$dir/$name.key" -out "$dir/$name.csr" \
      -subj "/CN=$([ $name = server ] && echo localhost || echo outbox-relay)" >/dev/null 2>&1 ||
      { echo "openssl could not make the $name key" >&2; return 1; }
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
      -out "$dir/$name.crt" -days 2 -extfile "$dir/$name.ext" >/dev/null 2>&1 ||
      { echo "openssl could not sign the $name certificate" >&2; return 1; }
  done
}
