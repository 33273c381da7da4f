#!/usr/bin/env python3
"""The exact response cache's lookup cost at a fixed request rate (issue 17's target: <= 0.2 ms
P99 at 1,000 req/s).

One `surge serve` on the bundled model behind `surge route --cache memory`. A jsonl dataset of
--distinct completion bodies (temperature 0, so cacheable) repeated with Zipf weights goes
through `surge bench --request-rate RATE` (Poisson); afterwards the router's
surge_router_cache_lookup_seconds histogram gives the lookup P50/P99 (Prometheus-style
interpolation inside the bucket), and its hit/miss counters the hit rate.

  /usr/bin/python3 scripts/bench_cache_lookup.py [--rate 1000] [--duration 10s] [--distinct 200]
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SURGE = os.path.join(ROOT, "build", "surge")
WORDS = "once upon a time there was a little girl named lily she liked to play in the park with her dog".split()


def start(args, pattern=r"ready on (http://\S+)"):
    proc = subprocess.Popen([SURGE, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = next(m.group(1) for line in proc.stdout if (m := re.search(pattern, line)))
    return proc, url


def quantile(buckets, q):
    """histogram_quantile over cumulative (le, count) pairs, as Prometheus computes it."""
    total = buckets[-1][1]
    rank = q * total
    prev_le, prev_count = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_count) / max(count - prev_count, 1e-12)
        prev_le, prev_count = le, count
    return prev_le


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rate", default="1000")
    p.add_argument("--duration", default="10s")
    p.add_argument("--distinct", type=int, default=200)
    p.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "cache_lookup"))
    args = p.parse_args()
    rng = random.Random(11)
    prompts = [" ".join(rng.choice(WORDS) for _ in range(10)) + f" #{i}" for i in range(args.distinct)]
    weights = [1 / (rank + 1) for rank in range(args.distinct)]  # Zipf, s = 1
    with open(args.out + ".jsonl", "w") as f:
        for prompt in rng.choices(prompts, weights, k=20000):
            f.write(json.dumps({"prompt": prompt, "max_tokens": 8, "temperature": 0}) + "\n")
    engine, engine_url = start(["serve", "models/stories260K", "--host", "127.0.0.1", "--port", "0"])
    router, url = start(["route", "--host", "127.0.0.1", "--port", "0", "--backend", engine_url, "--cache", "memory"])
    try:
        subprocess.run([SURGE, "bench", "--url", url, "--workload", "jsonl", "--dataset", args.out + ".jsonl",
                        "--request-rate", args.rate, "--duration", args.duration, "--calibrate=false",
                        "--json", args.out + ".json"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        text = urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
    finally:
        for proc in (router, engine):
            proc.terminate()
            proc.wait()
    buckets = []
    for line in text.splitlines():
        m = re.match(r'surge_router_cache_lookup_seconds_bucket\{(.*)\} (\S+)', line)
        if m and 'kind="exact"' in m.group(1):
            le = re.search(r'le="([^"]+)"', m.group(1)).group(1)
            buckets.append((float("inf") if le == "+Inf" else float(le), float(m.group(2))))
    buckets.sort()

    def counter(name):
        return sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith(name + "{") and 'kind="exact"' in l)
    hits, misses = counter("surge_router_cache_hits_total"), counter("surge_router_cache_misses_total")
    run = json.load(open(args.out + ".json"))["rounds"][0]
    print(f"{run['request_throughput']:.0f} req/s achieved (target {args.rate}), {run['completed']} done, "
          f"{run['failed']} failed; E2E P50 {run['e2e_latency_ms']['median']:.2f} ms, P99 {run['e2e_latency_ms']['p99']:.2f} ms")
    print(f"exact cache: {hits:.0f} hits, {misses:.0f} misses ({100 * hits / max(hits + misses, 1):.1f}% hits); "
          f"{buckets[-1][1]:.0f} lookups, P50 {1e3 * quantile(buckets, 0.5):.4f} ms, P99 {1e3 * quantile(buckets, 0.99):.4f} ms "
          f"(bucket bounds {', '.join(f'{le * 1e3:g}' for le, _ in buckets[:6])} ... ms)")
    return 0 if run["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
