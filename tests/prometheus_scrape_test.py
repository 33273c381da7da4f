#!/usr/bin/python3
"""A real Prometheus (Debian `prometheus`) scrapes a `surge route` and the two `surge serve`
engines behind it every second under a bounded load (two pools, tiers on, some invalid
requests); then every PromQL expression of deploy/grafana/surge-dashboard.json, template
variables substituted, must return a series with a finite value through /api/v1/query,
and so must every alert rule `surge alarms export --prometheus` writes for the seed rules (its
threshold comparison cut off). `promtool check metrics` lints each process's /metrics.
Usage: prometheus_scrape_test.py SURGE. Exits 77 (skipped) when prometheus is missing."""
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_fleet import MODEL, Load, http, start_engine, start_router, terminate  # noqa: E402

SURGE = sys.argv[1] if len(sys.argv) > 1 else "build/surge"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GRAFANA_JSON = os.path.join(ROOT, "deploy", "grafana", "surge-dashboard.json")
SEED_RULES = os.path.join(ROOT, "deploy", "alarms", "seed_rules.yaml")
RATE_INTERVAL, RANGE = "10s", "60s"
MIN_SCRAPES = 10  # of each target before querying, so a 10 s rate has points



def grafana_expressions():
    """(where, expr) of every panel target and every query variable of the dashboard."""
    dashboard = json.load(open(GRAFANA_JSON, encoding="utf-8"))
    out = [(f"panel '{p['title']}' {t['refId']}", t["expr"]) for p in dashboard["panels"] for t in p.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        match = re.fullmatch(r"label_values\((.+), (\w+)\)", variable.get("definition", ""))
        if match:  # the variable's values exist when its selector has series
            out.append((f"variable ${variable['name']}", match.group(1)))
    return out


def rule_expressions(rules_yaml):
    """(where, expr) of a Prometheus alerting-rules file, each without its final threshold
    comparison (`expr > 2` asks whether the figure exists, not whether the alert fires)."""
    out = []
    for group in yaml.safe_load(rules_yaml)["groups"]:
        for rule in group["rules"]:
            figure = re.sub(r"\s*(>=|<=|==|!=|>|<)\s*[-+0-9.eE]+\s*$", "", rule["expr"].strip())
            out.append((f"rule {rule.get('alert', rule.get('record'))}", figure))
    return out


EXPRESSION_SOURCES = [
    grafana_expressions,
    lambda: rule_expressions(subprocess.check_output([SURGE, "alarms", "export", "--prometheus", "--rules", SEED_RULES], text=True)),
]


def substitute(expr):
    """Grafana's variables as an "All" selection over the last minute."""
    expr = expr.replace("$__rate_interval", RATE_INTERVAL).replace("$__range", RANGE)
    return re.sub(r"\$\{?(job|instance|pool|backend)\}?", ".*", expr)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def host_port(url):
    return urllib.parse.urlsplit(url).netloc


class Prometheus:
    def __init__(self, engine_urls, router_url):
        """Scrapes the engines, and the router unless `router_url` is None, every second."""
        self.dir = tempfile.mkdtemp(prefix="surge_prometheus_")
        jobs = [{"job_name": "surge-engine", "static_configs": [{"targets": [host_port(u) for u in engine_urls]}]}]
        if router_url:
            jobs.append({"job_name": "surge-router", "static_configs": [{"targets": [host_port(router_url)]}]})
        config = {"global": {"scrape_interval": "1s", "scrape_timeout": "900ms"}, "scrape_configs": jobs}
        path = os.path.join(self.dir, "prometheus.yml")
        with open(path, "w") as file:
            yaml.safe_dump(config, file)
        self.url = f"http://127.0.0.1:{free_port()}"
        self.log = open(os.path.join(self.dir, "log"), "w+")
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file=" + path, "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
             "--web.listen-address=" + host_port(self.url), "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while not self._ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("prometheus did not start: " + open(self.log.name).read()[-3000:])
            time.sleep(0.2)

    def _ready(self):
        try:
            return http("GET", self.url + "/-/ready", timeout_s=2)[0] == 200
        except OSError:
            return False

    def query(self, expr):
        status, body = http("GET", self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        answer = json.loads(body)
        if status != 200 or answer.get("status") != "success":
            raise AssertionError(f"{expr}: {status} {answer.get('error', body)}")
        return answer["data"]["result"]

    def stop(self):
        terminate(self.proc, timeout_s=10)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def router_config(engine_urls):
    """Two pools (one engine each) and tiers: realtime on one, normal and batch on the other.
    The first is `default`, the pool the seed alarm rules read."""
    return {"backends": [{"url": engine_urls[0], "pool": "default"}, {"url": engine_urls[1], "pool": "bulk"}],
            "pools": {"default": {}, "bulk": {}},
            "tiers": {"pools": {"realtime": "default", "normal": "bulk", "batch": "bulk"}}}


def router_alarm_rules():
    """A rule that fires under the load and pages a receiver that is not there: the alarm
    families get series (states, transitions, failed actions) for the dashboard's alarm
    panels and the seed's AlarmActionsFailing rule."""
    return {"interval": "500ms", "rules": [{
        "name": "ServingTraffic", "severity": "info",
        "expr": {"kind": "rate", "metric": "surge_router_requests_total", "window": "5s"},
        "comparison": ">", "threshold": 0,
        "action": {"type": "webhook", "url": f"http://127.0.0.1:{free_port()}/alerts", "retries": 0,
                   "timeout": "1s"}}]}


def load_requests():
    ok = {"model": MODEL, "prompt": "Once upon a time", "max_tokens": 24, "temperature": 0.8}
    return [(ok, {"X-Priority": "realtime"}), (ok, {}), ({**ok, "priority": "batch"}, {}),
            (ok, {"X-Priority": "realtime"}), (ok, {}),
            ({**ok, "max_tokens": -3}, {}),  # 400 invalid_request: errors by kind have a series
            ({**ok, "timeout": 0.001}, {})]  # a 1 ms deadline (or 400 where `timeout` is unknown)


class PrometheusScrapeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.processes, cls.prometheus, cls.load = [], None, None
        try:
            cls.engines = [start_engine(SURGE) for _ in range(2)]
            cls.processes += cls.engines
            config = os.path.join(cls.engines[0].log_dir, "route.json")
            with open(config, "w") as file:
                json.dump(router_config([e.url for e in cls.engines]), file)
            rules = os.path.join(cls.engines[0].log_dir, "alarm_rules.json")
            with open(rules, "w") as file:
                json.dump(router_alarm_rules(), file)
            cls.router = start_router(SURGE, "--config", config, "--alarm-rules", rules)
            cls.processes.append(cls.router)
            cls.prometheus = Prometheus([e.url for e in cls.engines], cls.router.url)
            cls.load = Load(cls.router.url, concurrency=3, requests=load_requests())
            cls.wait_for_scrapes()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def wait_for_scrapes(cls):
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            counts = cls.prometheus.query("count_over_time(up[1m])")
            if len(counts) == 3 and min(float(c["value"][1]) for c in counts) >= MIN_SCRAPES:
                return
            time.sleep(0.5)
        raise AssertionError(f"Prometheus did not scrape every target {MIN_SCRAPES} times: {counts}")

    @classmethod
    def tearDownClass(cls):
        if cls.load:
            print("load:", cls.load.stop())
        if cls.prometheus:
            cls.prometheus.stop()
        for process in reversed(cls.processes):
            process.stop()

    def test_every_target_is_up(self):
        up = {r["metric"]["instance"]: r["value"][1] for r in self.prometheus.query("up")}
        self.assertEqual(sorted(up.values()), ["1", "1", "1"], up)

    def test_promtool_accepts_every_metrics_page(self):
        for process in self.processes:
            status, text = http("GET", process.url + "/metrics")
            self.assertEqual(status, 200)
            lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
            self.assertEqual(lint.returncode, 0, f"{process.url}: {lint.stdout}{lint.stderr}")

    def test_every_dashboard_expression_returns_data(self):
        failures, checked = [], 0
        for source in EXPRESSION_SOURCES:
            for where, expr in source():
                result = self.prometheus.query(substitute(expr))
                values = [float(r["value"][1]) for r in result]
                has_data = any(math.isfinite(v) for v in values)
                checked += 1
                if not has_data:
                    failures.append(f"{where}: no finite value ({values}) for {substitute(expr)}")
        print(f"{checked} expressions checked")
        self.assertEqual(failures, [])


if __name__ == "__main__":
    if shutil.which("prometheus") is None or shutil.which("promtool") is None:
        print("prometheus / promtool not installed (Debian package prometheus): skipped")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1], verbosity=2)
