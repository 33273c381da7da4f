#!/usr/bin/python3
"""Writes deploy/grafana/surge-dashboard.json and the panel table of deploy/grafana/README.md
from the panel list below, so that the dashboard, its documentation and the Prometheus test
(tests/prometheus_scrape_test.py, which queries every expression) never disagree.

  deploy/grafana/make_dashboard.py          rewrite both files
  deploy/grafana/make_dashboard.py --check  exit 1 when either file differs from this script
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
JSON_PATH = os.path.join(HERE, "surge-dashboard.json")
README_PATH = os.path.join(HERE, "README.md")
TABLE_BEGIN, TABLE_END = "<!-- panels:begin (make_dashboard.py) -->", "<!-- panels:end -->"

SEL = 'job=~"$job",instance=~"$instance"'
RATE = "[$__rate_interval]"
API = 'endpoint!="/metrics"'  # the scrapes themselves are not traffic


def rate(metric, labels=SEL):
    return f"rate({metric}{{{labels}}}{RATE})"


def quantiles(histogram, by="", labels=SEL):
    """P50 / P95 / P99 of a Prometheus histogram: one (expr, legend) per quantile."""
    group = ", ".join(["le"] + ([by] if by else []))
    suffix = f" {{{{{by}}}}}" if by else ""
    return [(f"histogram_quantile({q}, sum by ({group}) ({rate(histogram + '_bucket', labels)}))", f"P{int(q * 100)}{suffix}")
            for q in (0.5, 0.95, 0.99)]


def mean_of(histogram, labels=SEL):
    return (f"sum({rate(histogram + '_sum', labels)}) / sum({rate(histogram + '_count', labels)})", "mean")


def five_xx_ratio(counter, labels):
    # `or vector(0)`: no 5xx in the window is a ratio of 0, not an empty panel.
    errors = f'sum({rate(counter, labels + ",code=~" + chr(34) + "5.." + chr(34))}) or vector(0)'
    return f"({errors}) / sum({rate(counter, labels)})"


ROUTER = SEL + ',pool=~"$pool"'
BACKEND = SEL + ',backend=~"$backend"'

# (row, title, unit, seed figure it answers, [(expr, legend)], kind)
PANELS = [
    ("Traffic", "QPS by status code", "reqps", "§7.1 request count by status; QPS = rate of it",
     [(f"sum by (code) ({rate('surge_http_requests_total', SEL + ',' + API)})", "engine {{code}}"),
      (f"sum by (code) ({rate('surge_router_requests_total', ROUTER)})", "router {{code}}")], "timeseries"),
    ("Traffic", "Error ratio (5xx / all)", "percentunit", "§7.1 error rate",
     [(five_xx_ratio("surge_http_requests_total", SEL + "," + API), "engine"),
      (five_xx_ratio("surge_router_requests_total", ROUTER), "router")], "timeseries"),
    ("Traffic", "Active connections", "short", "§7.1 active connections",
     [("sum by (instance) (surge_http_active_connections{" + SEL + "})", "{{instance}}")], "timeseries"),
    ("Latency", "TTFT", "s", "§7.1 time to first token P50/P95/P99",
     quantiles("surge_time_to_first_token_seconds"), "timeseries"),
    ("Latency", "TPOT", "s", "§7.1 time per output token P50/P95/P99",
     quantiles("surge_time_per_output_token_seconds"), "timeseries"),
    ("Latency", "Inter-token latency", "s", "§7.1 inter-token latency P50/P95/P99",
     quantiles("surge_inter_token_latency_seconds"), "timeseries"),
    ("Latency", "End-to-end latency", "s", "§7.1 E2E request latency P50/P95/P99",
     quantiles("surge_e2e_request_latency_seconds"), "timeseries"),
    ("Latency", "Queue time by tier", "s", "§7.1 queue time P50/P95/P99",
     quantiles("surge_request_queue_time_seconds", by="tier"), "timeseries"),
    ("Latency", "Router TTFB and duration P95 by pool", "s", "§7.1 latency seen at the router",
     [(quantiles("surge_router_time_to_first_byte_seconds", by="pool", labels=ROUTER)[1][0], "TTFB P95 {{pool}}"),
      (quantiles("surge_router_request_duration_seconds", by="pool", labels=ROUTER)[1][0], "duration P95 {{pool}}")],
     "timeseries"),
    ("Throughput", "Tokens per second", "short", "§7.1 prompt and output tokens/s",
     [(f"sum({rate('surge_prompt_tokens_total')})", "prompt"),
      (f"sum({rate('surge_generation_tokens_total')})", "output")], "timeseries"),
    ("Throughput", "Batch size per step: sequences", "short", "§7.1 batch size (sequences per step)",
     [mean_of("surge_engine_step_sequences"), quantiles("surge_engine_step_sequences")[1]], "timeseries"),
    ("Throughput", "Batch size per step: tokens", "short", "§7.1 batch size (tokens per step)",
     [mean_of("surge_engine_step_tokens"), quantiles("surge_engine_step_tokens")[1]], "timeseries"),
    ("Throughput", "Engine busy fraction", "percentunit", "§7.1 GPU/CPU utilisation (time in forward passes)",
     [(f"avg by (instance) ({rate('surge_engine_busy_seconds_total')})", "{{instance}}"),
      (f"avg by (instance) ({rate('surge_engine_steps_total')})", "steps/s {{instance}}")], "timeseries"),
    ("Engine", "KV cache usage", "percentunit", "§7.1 KV cache usage",
     [("max by (instance) (surge_kv_cache_usage_ratio{" + SEL + "})", "{{instance}}")], "timeseries"),
    ("Engine", "KV cache bytes", "bytes", "§7.1 KV bytes in use and total",
     [("sum by (instance) (surge_kv_cache_used_bytes{" + SEL + "})", "used {{instance}}"),
      ("sum by (instance) (surge_kv_cache_total_bytes{" + SEL + "})", "total {{instance}}")], "timeseries"),
    ("Engine", "Running and waiting", "short", "§7.1 queue depth",
     [("sum by (instance) (surge_num_requests_running{" + SEL + "})", "running {{instance}}"),
      ("sum by (instance) (surge_num_requests_waiting{" + SEL + "})", "waiting {{instance}}")], "timeseries"),
    ("Engine", "Preemptions", "short", "§7.1 preemptions",
     [(f"sum by (instance) ({rate('surge_num_preemptions_total')})", "{{instance}}")], "timeseries"),
    ("Engine", "Prefix-cache hit ratio", "percentunit", "§7.1 prefix-cache hits",
     [(f"sum({rate('surge_prefix_cache_hits_total')}) / sum({rate('surge_prefix_cache_queries_total')})",
       "hit tokens / looked-up tokens")], "timeseries"),
    ("Errors", "Timeouts", "reqps", "§7.1 timeouts",
     [(f"sum by (instance) ({rate('surge_request_timeouts_total')})", "{{instance}}")], "timeseries"),
    ("Errors", "Errors by kind", "reqps", "§7.1 errors by kind",
     [(f"sum by (kind) ({rate('surge_request_errors_total')})", "engine {{kind}}"),
      (f"sum by (kind) ({rate('surge_router_errors_total')})", "router {{kind}}")], "timeseries"),
    ("Process", "Process CPU", "percentunit", "§7.1 process CPU seconds",
     [(f"sum by (instance) ({rate('process_cpu_seconds_total')})", "{{instance}}")], "timeseries"),
    ("Process", "Resident memory", "bytes", "§7.1 RSS",
     [("sum by (instance) (process_resident_memory_bytes{" + SEL + "})", "{{instance}}")], "timeseries"),
    ("Router", "Requests per backend", "reqps", "§7.1 per backend: requests",
     [(f"sum by (backend) ({rate('surge_router_requests_total', ROUTER + ',backend=~' + chr(34) + '$backend' + chr(34))})",
       "{{backend}}")], "timeseries"),
    ("Router", "In flight per backend", "short", "§7.1 per backend: in flight",
     [("sum by (backend) (surge_router_backend_in_flight{" + BACKEND + "})", "{{backend}}")], "timeseries"),
    ("Router", "Backend healthy / breaker", "short", "§7.1 per backend: health (1 up) and breaker (0 closed, 1 open, 2 half-open)",
     [("max by (backend) (surge_router_backend_healthy{" + BACKEND + "})", "healthy {{backend}}"),
      ("max by (backend) (surge_router_backend_breaker_state{" + BACKEND + "})", "breaker {{backend}}")], "timeseries"),
    ("Router", "Retries and no-backend by pool", "reqps", "§7.1 per pool: retries",
     [(f"sum by (pool) ({rate('surge_router_retries_total', ROUTER)})", "retries {{pool}}"),
      (f"sum by (pool) ({rate('surge_router_no_backend_total', ROUTER)})", "no backend {{pool}}")], "timeseries"),
    ("Tiers", "Router queue by pool and tier", "short", "§7.1 per tier: queue depth at the router",
     [("sum by (pool, tier) (surge_router_tier_queue_depth{" + ROUTER + "})", "{{pool}} {{tier}}")], "timeseries"),
    ("Tiers", "Admitted and rejected by tier", "reqps", "§7.1 per tier: admissions and 429s",
     [(f"sum by (tier) ({rate('surge_router_tier_admitted_total', ROUTER)})", "admitted {{tier}}"),
      (f"sum by (tier) ({rate('surge_router_tier_rejected_total', ROUTER)})", "rejected {{tier}}")], "timeseries"),
    ("Tiers", "TTFT by tier at the router", "s", "§7.1 per tier: TTFT P50/P95/P99",
     quantiles("surge_router_tier_ttft_seconds", by="tier"), "timeseries"),
    ("Tiers", "Pool slots", "short", "§7.1 per pool: capacity and use",
     [("sum by (pool) (surge_router_pool_slots_in_use{" + ROUTER + "})", "in use {{pool}}"),
      ("sum by (pool) (surge_router_pool_slots{" + ROUTER + "})", "slots {{pool}}")], "timeseries"),
    ("Alarms", "Alarms pending or firing", "short", "§7.2 alarm states",
     [("max by (alarm, severity, state) (surge_alarms{" + SEL + "})", "{{alarm}} {{state}}")], "table"),
    ("Alarms", "Alarm transitions", "short", "§7.2 alarm transitions",
     [("sum by (alarm, to) (increase(surge_alarm_transitions_total{" + SEL + "}[$__range]))", "{{alarm}} -> {{to}}")],
     "table"),
]

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def query_variable(name, label, query):
    return {"name": name, "label": label, "type": "query", "datasource": DATASOURCE,
            "definition": query, "query": {"query": query, "refId": f"{name}-query"},
            "multi": True, "includeAll": True, "allValue": ".*", "refresh": 2, "sort": 1,
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]}}


def templating():
    return {"list": [
        {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
         "current": {"selected": False, "text": "${DS_PROMETHEUS}", "value": "${DS_PROMETHEUS}"}, "refresh": 1},
        query_variable("job", "job", "label_values(process_start_time_seconds, job)"),
        query_variable("instance", "instance", 'label_values(process_start_time_seconds{job=~"$job"}, instance)'),
        query_variable("pool", "pool", 'label_values(surge_router_requests_total{job=~"$job"}, pool)'),
        query_variable("backend", "backend", 'label_values(surge_router_backend_healthy{job=~"$job"}, backend)'),
    ]}


def panel(panel_id, title, unit, seed, targets, kind, x, y):
    body = {"id": panel_id, "type": kind, "title": title, "description": seed, "datasource": DATASOURCE,
            "gridPos": {"h": 8, "w": 8, "x": x, "y": y},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "targets": [{"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend,
                         "range": kind != "table", "instant": kind == "table",
                         **({"format": "table"} if kind == "table" else {})}
                        for i, (expr, legend) in enumerate(targets)]}
    if kind == "timeseries":
        body["options"] = {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                           "tooltip": {"mode": "multi", "sort": "desc"}}
    return body


def dashboard():
    panels, y, row, column, next_id = [], 0, None, 0, 1
    for row_title, title, unit, seed, targets, kind in PANELS:
        if row_title != row:
            y += 8 if column else 0
            panels.append({"id": next_id, "type": "row", "title": row_title, "collapsed": False,
                           "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
            next_id, row, column, y = next_id + 1, row_title, 0, y + 1
        if column == 3:
            column, y = 0, y + 8
        panels.append(panel(next_id, title, unit, seed, targets, kind, column * 8, y))
        next_id, column = next_id + 1, column + 1
    return {
        "__inputs": [{"name": "DS_PROMETHEUS", "label": "Prometheus", "description": "scrapes surge serve and surge route",
                      "type": "datasource", "pluginId": "prometheus", "pluginName": "Prometheus"}],
        "__requires": [{"type": "grafana", "id": "grafana", "name": "Grafana", "version": "10.0.0"},
                       {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
                       {"type": "panel", "id": "timeseries", "name": "Time series", "version": ""},
                       {"type": "panel", "id": "table", "name": "Table", "version": ""}],
        "uid": "surge-overview", "title": "surge: engines and router", "tags": ["surge", "llm"],
        "description": "Issue 16 §7.1: every figure an operator watches on surge serve and surge route.",
        "editable": True, "graphTooltip": 1, "schemaVersion": 39, "version": 1, "refresh": "10s",
        "time": {"from": "now-1h", "to": "now"}, "timezone": "", "templating": templating(),
        "annotations": {"list": []}, "links": [], "panels": panels,
    }


def readme_table():
    lines = [TABLE_BEGIN, "", "| row | panel | answers | PromQL |", "|---|---|---|---|"]
    for row_title, title, _, seed, targets, _ in PANELS:
        exprs = "<br>".join("`" + expr.replace("|", "\\|") + "`" for expr, _ in targets)
        lines.append(f"| {row_title} | {title} | {seed} | {exprs} |")
    return "\n".join(lines + ["", TABLE_END])


def wanted_files():
    readme = open(README_PATH, encoding="utf-8").read()
    begin, end = readme.index(TABLE_BEGIN), readme.index(TABLE_END) + len(TABLE_END)
    return {JSON_PATH: json.dumps(dashboard(), indent=2) + "\n",
            README_PATH: readme[:begin] + readme_table() + readme[end:]}


def main():
    check = sys.argv[1:] == ["--check"]
    stale = []
    for path, text in wanted_files().items():
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current == text:
            continue
        stale.append(path)
        if not check:
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
    if check and stale:
        print("out of date (run deploy/grafana/make_dashboard.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
