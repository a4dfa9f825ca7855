#!/usr/bin/env python3
"""The systemd unit and the Docker image's recipe, checked without systemd running and without a container engine:
- deploy/systemd/outbox-relay.service passes `systemd-analyze verify` with no warning (an unknown or misplaced key
  is only a warning there, and is ignored at run time), stops with SIGTERM within a timeout above the relay's
  shutdown wait, does not restart on the exit codes that restarting would repeat, and keeps the hardening options;
- docker/Dockerfile builds with the same install script and build type as the tests, and its runtime stage installs
  the Debian package of every shared library the built binary and its librdkafka need (drift: a new dependency
  added to the build and not to the image fails here, not in a user's `docker run`).

  deploy_files_test.py --relay build/src/app/outbox-relay --rdkafka <librdkafka.so.1>
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNIT = os.path.join(ROOT, "deploy", "systemd", "outbox-relay.service")
DOCKERFILE = os.path.join(ROOT, "docker", "Dockerfile")
ARGS = None
# In debian:bookworm-slim already (Essential, or required by apt itself).
BASE_IMAGE_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1", "zlib1g", "libzstd1", "liblz4-1"}


def read(path):
    with open(path) as f:
        return f.read()


def unit_settings(text):
    settings = {}
    section = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        settings.setdefault((section, key), []).append(value)
    return settings


class SystemdUnit(unittest.TestCase):
    def test_systemd_analyze_verify_passes_without_a_warning(self):
        with tempfile.TemporaryDirectory() as d:
            unit = os.path.join(d, "outbox-relay.service")
            with open(unit, "w") as f:
                f.write(read(UNIT).replace("/usr/local/bin/outbox-relay", os.path.abspath(ARGS.relay)))
            proc = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True,
                                  env={**os.environ, "SYSTEMD_LOG_LEVEL": "info"})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        problems = [l for l in proc.stderr.splitlines() if "outbox-relay.service" in l]
        self.assertEqual(problems, [], "\n".join(problems))

    def test_stop_restart_and_hardening(self):
        s = unit_settings(read(UNIT))
        svc = lambda key: s.get(("Service", key), [None])[-1]
        self.assertEqual(svc("KillSignal"), "SIGTERM")
        self.assertGreater(int(svc("TimeoutStopSec")), 30, "above delivery.shutdown_timeout_ms's default 30 s")
        self.assertEqual(svc("Restart"), "on-failure")
        self.assertEqual(set(svc("RestartPreventExitStatus").split()), {"1", "2"},
                         "a fatal error (1) or a config error (2) would only repeat")
        self.assertTrue(svc("ExecStart").endswith("outbox-relay run -c /etc/outbox-relay/relay.yaml"))
        for key, value in [("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("ProtectHome", "yes"),
                           ("PrivateTmp", "yes"), ("DynamicUser", "yes"), ("CapabilityBoundingSet", ""),
                           ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX")]:
            self.assertEqual(svc(key), value, key)
        self.assertEqual(svc("StateDirectory"), "outbox-relay", "the only writable place besides the private /tmp")


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def resolved(path):
    """soname -> path, as the loader finds them for `path`."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    return dict(re.findall(r"^\s*(\S+) => (\S+)", out, re.M))


def package_of(path):
    for candidate in (path, os.path.realpath(path), re.sub(r"^/lib/", "/usr/lib/", path),
                      re.sub(r"^/lib/", "/usr/lib/", os.path.realpath(path))):
        proc = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout.split(":", 1)[0].strip()
    return None


def runtime_packages(dockerfile):
    runtime = dockerfile.split("FROM debian:bookworm-slim", 1)[1]
    install = re.search(r"apt-get install[^\n]*\\\n(.*?)\n\s*&&", runtime, re.S).group(1)
    return set(re.findall(r"[a-z0-9][a-z0-9.+-]+", install.replace("\\", " ")))


class Dockerfile(unittest.TestCase):
    def setUp(self):
        self.text = read(DOCKERFILE)

    def test_the_build_stage_runs_the_projects_install_script_and_build(self):
        build = self.text.split("FROM debian:bookworm-slim", 1)[0]
        self.assertRegex(build, r"bash scripts/install-deps\.sh --no-kafka")
        test_sh = read(os.path.join(ROOT, "scripts", "test.sh"))
        build_type = re.search(r"-DCMAKE_BUILD_TYPE=(\w+)", test_sh).group(1)
        self.assertIn(f"-DCMAKE_BUILD_TYPE={build_type}", build, "the image is built as the tests build")
        self.assertIn('-DRDKAFKA_ROOT="$RDKAFKA_PREFIX"', build, "librdkafka from install-deps.sh's prefix")
        self.assertIn("FROM debian:bookworm AS build", build, "the machine the scripts are written for")

    def test_the_runtime_stage_installs_every_library_the_binary_needs(self):
        packages = runtime_packages(self.text)
        self.assertIn("libpq5", packages)
        for binary in (ARGS.relay, ARGS.rdkafka):
            where = resolved(binary)
            for soname in needed(binary):
                if soname.startswith("librdkafka") or soname.startswith("ld-linux"):
                    continue  # copied from the build stage; the loader
                with self.subTest(binary=os.path.basename(binary), library=soname):
                    self.assertIn(soname, where, f"ldd does not resolve {soname}")
                    package = package_of(where[soname])
                    self.assertIsNotNone(package, f"{where[soname]} belongs to no Debian package")
                    self.assertTrue(package in packages or package in BASE_IMAGE_PACKAGES,
                                    f"{soname} ({package}) is not installed by docker/Dockerfile's runtime stage")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--relay", required=True)
    parser.add_argument("--rdkafka", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
