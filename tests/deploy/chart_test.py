#!/usr/bin/env python3
"""The Helm chart (deploy/helm/outbox-relay): helm lint and helm template over the default values and the variants in
ci/, then checks on the rendered objects: the probes point at /healthz and /readyz?standby=ok on the port the
relay listens on, the rendered config passes `outbox-relay check --offline`, every ${file:} it names is under a
mounted Secret and every ${env:} is in the container's environment, and no secret value can reach a ConfigMap
(a literal password in the values fails the render, naming the key).

  chart_test.py --relay build/src/app/outbox-relay [--helm PATH]   (helm: $HELM_BIN, else the install-deps cache)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import unittest

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHART = os.path.join(ROOT, "deploy", "helm", "outbox-relay")
VARIANTS = [None] + sorted(os.path.join(CHART, "ci", f) for f in os.listdir(os.path.join(CHART, "ci")))
ARGS = None


def default_helm():
    if os.environ.get("HELM_BIN"):
        return os.environ["HELM_BIN"]
    versions = open(os.path.join(ROOT, "scripts", "versions.sh")).read()
    version = re.search(r"^HELM_VERSION=(\S+)", versions, re.M).group(1)
    cache = os.environ.get("OUTBOX_RELAY_CACHE", os.path.expanduser("~/.cache/outbox-relay"))
    return os.path.join(cache, f"helm-{version}", "bin", "helm")


def helm(*args, check=True):
    proc = subprocess.run([ARGS.helm, *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def render(values=None, sets=()):
    args = ["template", "rel", CHART]
    if values:
        args += ["-f", values]
    for s in sets:
        args += ["--set-string", s]
    docs = [d for d in yaml.safe_load_all(helm(*args).stdout) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def one(objects, kind):
    found = [o for (k, _), o in objects.items() if k == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def references(text, kind):
    return re.findall(r"\$\{" + kind + r":([^}]+)\}", text)


class Chart(unittest.TestCase):
    def test_lint_passes_for_every_variant(self):
        for values in VARIANTS:
            args = ["lint", "--strict", CHART] + (["-f", values] if values else [])
            proc = helm(*args, check=False)
            self.assertEqual(proc.returncode, 0, f"{values}: {proc.stdout}{proc.stderr}")

    def test_probes_point_at_the_relays_endpoints_on_its_port(self):
        for values in VARIANTS:
            with self.subTest(values=values):
                objects = render(values)
                pod = one(objects, "Deployment")["spec"]["template"]["spec"]
                container = pod["containers"][0]
                ports = {p["name"]: p["containerPort"] for p in container["ports"]}
                self.assertIn("http", ports)
                config = yaml.safe_load(one(objects, "ConfigMap")["data"]["relay.yaml"])
                listen_port = int(config["http"]["listen"].rsplit(":", 1)[1])
                self.assertEqual(listen_port, ports["http"], "the relay listens where the probes ask")
                self.assertTrue(config["http"]["listen"].startswith("0.0.0.0:"), "reachable from the kubelet")
                live, ready = container["livenessProbe"]["httpGet"], container["readinessProbe"]["httpGet"]
                self.assertEqual(live["path"], "/healthz")
                self.assertEqual(ready["path"], "/readyz?standby=ok",
                                 "plain /readyz is 503 for the standby: its pod would never be ready")
                self.assertIn(live["port"], ("http", ports["http"]))
                self.assertIn(ready["port"], ("http", ports["http"]))
                service = one(objects, "Service")
                self.assertEqual(service["spec"]["ports"][0]["targetPort"], "http")
                self.assertEqual(service["spec"]["selector"], one(objects, "Deployment")["spec"]["selector"]["matchLabels"])
                # The grace period outlasts the relay's own shutdown wait (delivery.shutdown_timeout_ms).
                shutdown_ms = int(config.get("delivery", {}).get("shutdown_timeout_ms", 30000))
                self.assertGreater(pod["terminationGracePeriodSeconds"] * 1000, shutdown_ms)
                self.assertEqual(container["args"][:3], ["run", "-c", "/etc/outbox-relay/relay.yaml"])

    def test_two_replicas_a_budget_that_keeps_one_and_a_rollout_that_surges_first(self):
        objects = render()
        deployment = one(objects, "Deployment")
        self.assertEqual(deployment["spec"]["replicas"], 2)
        self.assertEqual(deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 0)
        pdb = one(objects, "PodDisruptionBudget")
        self.assertEqual(pdb["spec"]["minAvailable"], 1)
        self.assertEqual(pdb["spec"]["selector"]["matchLabels"], deployment["spec"]["selector"]["matchLabels"])
        self.assertNotIn("ServiceMonitor", [k for k, _ in objects])
        monitored = render(os.path.join(CHART, "ci", "pipelines-values.yaml"))
        endpoint = one(monitored, "ServiceMonitor")["spec"]["endpoints"][0]
        self.assertEqual((endpoint["port"], endpoint["path"]), ("http", "/metrics"))

    def test_the_rendered_config_passes_check_offline_and_its_references_are_mounted(self):
        for values in VARIANTS:
            with self.subTest(values=values):
                objects = render(values)
                text = one(objects, "ConfigMap")["data"]["relay.yaml"]
                pod = one(objects, "Deployment")["spec"]["template"]["spec"]
                container = pod["containers"][0]
                mounts = [m["mountPath"] for m in container["volumeMounts"]]
                for path in references(text, "file"):
                    self.assertTrue(any(path.startswith(m.rstrip("/") + "/") for m in mounts),
                                    f"${{file:{path}}} is under no mounted volume ({mounts})")
                env = {e["name"] for e in container.get("env", [])}
                for name in references(text, "env"):
                    self.assertIn(name, env, f"${{env:{name}}} is not in the container's environment")
                with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
                    f.write(text)
                    f.flush()
                    proc = subprocess.run([ARGS.relay, "check", "--offline", "-c", f.name], capture_output=True,
                                          text=True, env={"PATH": os.environ.get("PATH", "")})
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertIn("ok: no problem found", proc.stdout)
                for path in references(text, "file"):
                    self.assertIn(f"${{file:{path}}}", proc.stdout, "listed as not resolvable here")
                if "pipelines" in yaml.safe_load(text):
                    self.assertIn("== pipeline orders ==", proc.stdout)
                    self.assertIn("== pipeline billing ==", proc.stdout)

    def test_check_offline_refuses_a_bad_rendered_config_naming_the_key(self):
        objects = render(sets=["config.delivery.max_inflight_events=many"])
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write(one(objects, "ConfigMap")["data"]["relay.yaml"])
            f.flush()
            proc = subprocess.run([ARGS.relay, "check", "--offline", "-c", f.name], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("delivery.max_inflight_events", proc.stderr)

    def test_no_secret_value_is_rendered_into_a_configmap(self):
        for values in VARIANTS:
            with self.subTest(values=values):
                objects = render(values)
                self.assertNotIn("Secret", [k for k, _ in objects], "the chart uses existing Secrets only")
                text = one(objects, "ConfigMap")["data"]["relay.yaml"]
                self.assertIsNone(re.search(r"password=(?!\$\{)", text), text)
                for key, value in re.findall(r"^\s*([\w.]*(?:password|token|secret)):\s*(\S+)", text, re.M):
                    self.assertRegex(value.strip("'\""), r"^\$\{(env|file):[^}]+\}$", key)
        for literal, key in [("config.kafka.sasl\\.password=hunter2", "config.kafka.sasl.password"),
                             ("config.source.conninfo=host=db password=hunter2", "config.source.conninfo"),
                             ("config.nats.token=s3cret", "config.nats.token"),
                             ("config.pipelines.a.kafka.ssl\\.key\\.password=pw", "config.pipelines.a.kafka.ssl.key.password")]:
            with self.subTest(literal=literal):
                proc = helm("template", "rel", CHART, "--set-string", literal, check=False)
                self.assertNotEqual(proc.returncode, 0, "a literal secret must fail the render")
                self.assertIn(key, proc.stderr)
                self.assertNotIn("hunter2", proc.stdout)

    def test_a_config_change_rolls_the_pods(self):
        before = one(render(), "Deployment")["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
        after = one(render(sets=["config.source.slot=other"]), "Deployment")
        self.assertNotEqual(before, after["spec"]["template"]["metadata"]["annotations"]["checksum/config"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--relay", required=True)
    parser.add_argument("--helm", default=None)
    ARGS, rest = parser.parse_known_args()
    ARGS.helm = ARGS.helm or default_helm()
    if not os.access(ARGS.helm, os.X_OK):
        sys.exit(f"chart_test: no helm at {ARGS.helm} (scripts/install-deps.sh builds it)")
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
