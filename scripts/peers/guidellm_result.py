"""Reads one point out of a GuideLLM JSON report (guidellm run --output json): the first
benchmark's metrics in the units of `surge bench --json` (ms, tokens per second of wall time)."""


def _successful(metrics, name, stat):
    value = metrics[name]["successful"]
    return value["percentiles"][stat] if stat.startswith("p") else value[stat]


def _errors(requests):
    """Errored requests by the first line of their error, as surge bench's errors-by-kind."""
    errors, examples = {}, {}
    for request in requests.get("errored") or []:
        kind = str(request.get("error") or "unknown").split("\n")[0][:120]
        errors[kind] = errors.get(kind, 0) + 1
        examples.setdefault(kind, str(request.get("error")))
    incomplete = len(requests.get("incomplete") or [])
    if incomplete:
        errors["incomplete"] = incomplete
    return errors, examples


def point(report):
    benchmark = report["benchmarks"][0]
    m = benchmark["metrics"]
    totals = m["request_totals"]
    errors, examples = _errors(benchmark.get("requests") or {})
    return {"requests": totals["total"], "completed": totals["successful"],
            "failed": totals["errored"] + totals.get("incomplete", 0), "errors": errors, "error_examples": examples,
            "duration_s": benchmark["duration"],
            "output_tok_s": m["output_tokens_per_second"]["successful"]["mean"],
            "input_tokens": m["prompt_token_count"]["successful"]["total_sum"],
            "output_tokens": m["output_token_count"]["successful"]["total_sum"],
            "ttft_p50_ms": _successful(m, "time_to_first_token_ms", "p50"),
            "ttft_p95_ms": _successful(m, "time_to_first_token_ms", "p95"),
            "itl_mean_ms": _successful(m, "inter_token_latency_ms", "mean"),
            "itl_p50_ms": _successful(m, "inter_token_latency_ms", "p50"),
            "itl_p95_ms": _successful(m, "inter_token_latency_ms", "p95"),
            "tpot_mean_ms": _successful(m, "time_per_output_token_ms", "mean")}
