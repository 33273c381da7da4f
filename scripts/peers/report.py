#!/usr/bin/env python3
"""Turns the raw results of scripts/peers/run.sh into peers.json, peers.html and a Markdown
table (docs/PEERS.md). Reads, under OUT:
  meta.json                                    machine, BM_Limits, settings, load averages
  ENGINE/serve.log, ENGINE/error.txt           an engine that did not come up says why here
  ENGINE/metrics_before.txt, metrics_after.txt its /metrics text around all the runs
  ENGINE/WORKLOAD/surge_cC.json                `surge bench --json` of one concurrency
  ENGINE/WORKLOAD/guidellm_cC.json             GuideLLM's --output-path of one concurrency
  ENGINE/WORKLOAD/CLIENT_cC.err                a client's stderr (kept as the point's error)

  scripts/peers/report.py OUT        # writes OUT/peers.json, OUT/peers.html, prints the table
"""
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import guidellm_result  # noqa: E402
import report_html  # noqa: E402

# Each engine's own prefix-cache counters (llama.cpp has none: the prompt tokens it actually
# evaluated, against the prompt tokens the clients sent, say how much its slots reused).
COUNTERS = re.compile(r"^(surge_prefix_cache_(?:queries|hits)_total|vllm:prefix_cache_(?:queries|hits)_total|"
                      r"vllm:prompt_tokens_total|llamacpp:prompt_tokens_total|llamacpp:tokens_predicted_total)"
                      r"(?:\{[^}]*\})?\s+([0-9.eE+-]+)$")
FILE = re.compile(r"^(surge|guidellm)_c(\d+)\.json$")


def read_counters(path):
    """Sums of the prefix-cache counters in a Prometheus text file ({} when absent)."""
    out = {}
    if not path.exists():
        return out
    for line in path.read_text(errors="replace").splitlines():
        match = COUNTERS.match(line.strip())
        if match:
            out[match.group(1)] = out.get(match.group(1), 0.0) + float(match.group(2))
    return out


def from_surge_bench(report):
    """The metrics of the first round of a `surge bench --json` report."""
    r = report["rounds"][0]
    return {"requests": r["num_requests"], "completed": r["completed"], "failed": r["failed"],
            "errors": r.get("errors") or {}, "error_examples": r.get("error_examples") or {},
            "duration_s": r["duration_s"], "output_tok_s": r["output_token_throughput"],
            "input_tokens": r["total_input_tokens"], "output_tokens": r["total_output_tokens"],
            "ttft_p50_ms": r["ttft_ms"]["median"], "ttft_p95_ms": r["ttft_ms"]["p95"],
            "itl_mean_ms": r["itl_ms"]["mean"], "itl_p50_ms": r["itl_ms"]["median"],
            "itl_p95_ms": r["itl_ms"]["p95"], "tpot_mean_ms": r["tpot_ms"]["mean"]}


def load_point(path):
    match = FILE.match(path.name)
    client, concurrency = match.group(1), int(match.group(2))
    point = {"client": client, "concurrency": concurrency}
    try:
        report = json.loads(path.read_text())
        point.update(from_surge_bench(report) if client == "surge" else guidellm_result.point(report))
    except (ValueError, KeyError, IndexError, TypeError) as e:
        point["failed_to_read"] = f"{path.name}: {type(e).__name__}: {e}"
    return point


def client_error(path):
    """The last lines of a client's stderr, when it failed."""
    if not path.exists():
        return None
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return "\n".join(lines[-5:]) or None


def collect(out):
    meta = json.loads((out / "meta.json").read_text()) if (out / "meta.json").exists() else {}
    engines, points = {}, []
    engine_dirs = [p for p in out.iterdir() if (p / "serve.log").exists() or (p / "error.txt").exists()]
    for engine_dir in sorted(engine_dirs):
        engine = engine_dir.name
        error = engine_dir / "error.txt"
        engines[engine] = {
            "error": error.read_text().strip() if error.exists() else None,
            "prefix_cache_before": read_counters(engine_dir / "metrics_before.txt"),
            "prefix_cache_after": read_counters(engine_dir / "metrics_after.txt"),
            "client_errors": [],
        }
        for workload_dir in sorted(p for p in engine_dir.iterdir() if p.is_dir()):
            for path in sorted(workload_dir.glob("*_c*.json")):
                if not FILE.match(path.name):
                    continue
                point = load_point(path)
                point.update(engine=engine, workload=workload_dir.name)
                err = client_error(path.with_suffix(".err"))
                if err and (point.get("failed_to_read") or point.get("failed")):
                    engines[engine]["client_errors"].append(f"{workload_dir.name} {path.stem}: {err}")
                points.append(point)
    points.sort(key=lambda p: (p["workload"], p["client"], p["engine"], p["concurrency"]))
    return {"meta": meta, "engines": engines, "points": points}


def fmt(value, digits=0):
    return "-" if value is None else f"{value:,.{digits}f}"


def ratio(a, b):
    return "-" if not a or not b else f"{a / b:.2f}x"


def markdown(data):
    """One table per workload and client: output tok/s and P95 TTFT per engine, surge's ratios."""
    engines = report_html.engine_order(data["engines"])
    others = [e for e in engines if e != "surge"]
    lines = []
    by_key = {(p["workload"], p["client"], p["engine"], p["concurrency"]): p for p in data["points"]}
    for workload, client in sorted({(p["workload"], p["client"]) for p in data["points"]}):
        lines += [f"\n**{workload}**, client {client} (output tok/s; P95 TTFT ms)\n"]
        head = ["c"] + [f"{e} tok/s" for e in engines] + [f"{e} P95 TTFT" for e in engines]
        head += [f"surge/{e} tok/s" for e in others] + [f"{e}/surge P95 TTFT" for e in others]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        concurrencies = sorted({p["concurrency"] for p in data["points"] if (p["workload"], p["client"]) == (workload, client)})
        for c in concurrencies:
            got = {e: by_key.get((workload, client, e, c), {}) for e in engines}
            row = [str(c)] + [fmt(got[e].get("output_tok_s"), 1) for e in engines]
            row += [fmt(got[e].get("ttft_p95_ms")) for e in engines]
            surge = got.get("surge", {})
            row += [ratio(surge.get("output_tok_s"), got[e].get("output_tok_s")) for e in others]
            row += [ratio(got[e].get("ttft_p95_ms"), surge.get("ttft_p95_ms")) for e in others]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines).strip() + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    data = collect(out)
    data["table_markdown"] = markdown(data)
    (out / "peers.json").write_text(json.dumps(data, indent=2) + "\n")
    (out / "peers.html").write_text(report_html.page(data))
    print(data["table_markdown"])


if __name__ == "__main__":
    main()
