#!/usr/bin/env python3
"""Offline batch throughput against the same lines sent live (issue 18's target).

One `surge serve` (MODEL, default the bundled stories260K). N completion lines (random
words of the bench's kind, `max_tokens` T, temperature 0, ignore_eos) go through
`surge batch run` (the Batch API's dispatcher: X-Priority batch, adaptive window up to
--max-in-flight); then the same shape runs live with `surge bench` at concurrency 16, 32, 64
and 128. Reports lines/s and output tok/s of the batch and of the best live concurrency.

  /usr/bin/python3 scripts/bench_batch_offline.py [--lines 10000] [--max-tokens 32] [--model DIR]
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SURGE = os.path.join(ROOT, "build", "surge")
WORDS = "once upon a time there was a little girl named lily she liked to play in the park with her dog".split()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lines", type=int, default=10000)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--max-in-flight", type=int, default=64)
    p.add_argument("--model", default="models/stories260K")
    p.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "batch_offline"))
    args = p.parse_args()
    rng = random.Random(7)
    with open(args.out + ".in.jsonl", "w") as f:
        for i in range(args.lines):
            prompt = " ".join(rng.choice(WORDS) for _ in range(12))
            f.write(json.dumps({"custom_id": f"line-{i}", "method": "POST", "url": "/v1/completions",
                                "body": {"prompt": prompt, "max_tokens": args.max_tokens, "temperature": 0,
                                         "ignore_eos": True}}) + "\n")
    server = subprocess.Popen([SURGE, "serve", args.model, "--host", "127.0.0.1", "--port", "0"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = next(m.group(1) for line in server.stdout if (m := re.search(r"ready on (http://\S+)", line)))
        start = time.monotonic()
        subprocess.run([SURGE, "batch", "run", args.out + ".in.jsonl", args.out + ".out.jsonl", "--url", url,
                        "--max-in-flight", str(args.max_in_flight)], cwd=ROOT, check=True)
        batch_s = time.monotonic() - start
        ok = tokens = 0
        for line in open(args.out + ".out.jsonl"):
            row = json.loads(line)
            if row.get("response") and row["response"]["status_code"] == 200:
                ok += 1
                tokens += row["response"]["body"]["usage"]["completion_tokens"]
        live = args.out + ".live.json"
        subprocess.run([SURGE, "bench", "--url", url, "--endpoint", "completions", "--concurrency", "16,32,64,128",
                        "--duration", "15s", "--input-len", "12", "--output-len", str(args.max_tokens),
                        "--ignore-eos", "--calibrate=false", "--json", live], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        server.terminate()
        server.wait()
    rounds = json.load(open(live))["rounds"]
    best = max(rounds, key=lambda r: r["output_token_throughput"])
    print(f"batch: {ok}/{args.lines} lines ok in {batch_s:.1f} s: {ok / batch_s:.1f} lines/s, "
          f"{tokens / batch_s:.0f} output tok/s (surge batch run, --max-in-flight {args.max_in_flight})")
    for r in rounds:
        print(f"live {r['point']:>6}: {r['request_throughput']:.1f} req/s, {r['output_token_throughput']:.0f} output tok/s, "
              f"TTFT P95 {r['ttft_ms']['p95']:.1f} ms, failed {r['failed']}")
    print(f"batch / best live ({best['point']}) output tok/s: {tokens / batch_s / best['output_token_throughput']:.3f}")
    return 0 if ok == args.lines else 1


if __name__ == "__main__":
    sys.exit(main())
