#!/usr/bin/env python3
"""The alert rules (deploy/prometheus) and the dashboard (deploy/grafana), checked with promtool:
- the rules file is valid, and `promtool test rules` passes on its synthetic series;
- every alert of the rules file has a test case where it fires and one where it does not (a rule without both
  could be mis-thresholded or never fire, and the unit test would not notice);
- every dashboard query parses as PromQL once the dashboard's template variables are substituted, names only
  variables the dashboard defines, and every panel has a query.
Which metric names the files may use is checked against a live relay in tests/app/observability_test.cc.

  monitoring_test.py [--promtool PATH]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES = os.path.join(ROOT, "deploy", "prometheus", "outbox-relay-rules.yaml")
RULE_TESTS = os.path.join(ROOT, "deploy", "prometheus", "tests", "outbox-relay-rules.test.yaml")
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "outbox-relay.json")
PROMTOOL = "promtool"
# What Grafana puts in for its built-in variables, and for the dashboard's own when "All" is chosen.
BUILTINS = {"__rate_interval": "1m", "__interval": "1m", "__range": "1h"}


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def promtool(*args):
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True)


class Rules(unittest.TestCase):
    def test_the_rules_file_is_valid(self):
        proc = promtool("check", "rules", RULES)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_promtool_test_rules_passes(self):
        proc = promtool("test", "rules", RULE_TESTS)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_every_alert_is_shown_firing_and_not_firing(self):
        alerts = [r["alert"] for g in load_yaml(RULES)["groups"] for r in g["rules"] if "alert" in r]
        self.assertGreaterEqual(len(alerts), 10)
        cases = [c for t in load_yaml(RULE_TESTS)["tests"] for c in t.get("alert_rule_test", [])]
        for alert in alerts:
            with self.subTest(alert=alert):
                mine = [c for c in cases if c["alertname"] == alert]
                self.assertTrue(any(c.get("exp_alerts") for c in mine), f"{alert}: no case where it fires")
                self.assertTrue(any(not c.get("exp_alerts") for c in mine), f"{alert}: no case where it does not fire")
        self.assertEqual(sorted(set(c["alertname"] for c in cases) - set(alerts)), [], "cases of alerts that do not exist")

    def test_each_alert_has_a_severity_and_a_summary(self):
        for group in load_yaml(RULES)["groups"]:
            for rule in group["rules"]:
                with self.subTest(alert=rule.get("alert")):
                    self.assertIn(rule["labels"]["severity"], ("warning", "critical"))
                    self.assertTrue(rule["annotations"]["summary"])


def dashboard_queries(dashboard):
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield panel["title"], target["expr"]
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            yield f"variable {var['name']}", var["definition"]


class Dashboard(unittest.TestCase):
    def setUp(self):
        with open(DASHBOARD) as f:
            self.dashboard = json.load(f)
        self.variables = {v["name"]: v for v in self.dashboard["templating"]["list"]}

    def substitute(self, expr):
        def value(m):
            name = m.group(1) or m.group(2)
            if name in BUILTINS:
                return BUILTINS[name]
            self.assertIn(name, self.variables, f"${name} is not a variable of the dashboard")
            return self.variables[name].get("allValue", "x")
        return re.sub(r"\$\{(\w+)\}|\$(\w+)", value, expr)

    def test_every_panel_has_a_query_and_a_unique_id(self):
        ids = [p["id"] for p in self.dashboard["panels"]]
        self.assertEqual(len(ids), len(set(ids)))
        for panel in self.dashboard["panels"]:
            self.assertTrue(panel.get("targets"), panel["title"])
            self.assertEqual(panel["datasource"]["uid"], "${datasource}", panel["title"])

    def test_every_query_parses_after_substituting_the_variables(self):
        queries = []
        for where, expr in dashboard_queries(self.dashboard):
            m = re.fullmatch(r"label_values\((.*), *(\w+)\)", expr)
            queries.append((where, self.substitute(m.group(1) if m else expr)))
        self.assertGreaterEqual(len(queries), 15)
        # promtool parses PromQL when it checks a rules file: one recording rule per query.
        rules = {"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:query{i}", "expr": q} for i, (_, q) in enumerate(queries)]}]}
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            yaml.safe_dump(rules, f)
            f.flush()
            proc = promtool("check", "rules", f.name)
        self.assertEqual(proc.returncode, 0, f"{proc.stdout}{proc.stderr}\n" +
                         "\n".join(f"query{i} ({w}): {q}" for i, (w, q) in enumerate(queries)))

    def test_the_views_the_operators_need_are_there(self):
        text = json.dumps(self.dashboard)
        for metric in ["outbox_relay_events_total", "outbox_relay_commit_to_ack_seconds_bucket",
                       "outbox_relay_replication_lag_bytes", "outbox_relay_behind_source_seconds",
                       "outbox_relay_inflight_events_limit", "outbox_relay_inflight_bytes_limit",
                       "outbox_relay_slot_retained_wal_bytes", "outbox_relay_delivery_errors_total"]:
            self.assertIn(metric, text)
        self.assertIn("pipeline", self.variables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--promtool", default="promtool")
    args, rest = parser.parse_known_args()
    PROMTOOL = args.promtool
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
