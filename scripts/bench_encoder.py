#!/usr/bin/env python3
"""Sentence-encoder throughput, surge vs sentence-transformers, same machine, same threads.

surge: a `surge serve MODEL --threads T` it starts itself, fed text through /v1/embeddings
(tokenization, HTTP and JSON included): batch 1 = one input per request, one request at a
time; batch 64 = 64 inputs per request. sentence-transformers: SentenceTransformer(MODEL,
device="cpu").encode(texts, batch_size=B) with torch.set_num_threads(T). Inputs: the
labelled queries of tests/data/semantic_cache_*.jsonl (short questions, as the semantic
cache sees). Prints inputs/s for each and the ratio. Needs torch and sentence-transformers
(scripts/bench_encoder_vs_st.sh builds such an environment outside the clone).

  python scripts/bench_encoder.py --surge build/surge --model models/all-MiniLM-L6-v2 --threads 2
"""
import argparse
import json
import os
import re
import signal
import subprocess
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_texts():
    texts = []
    for name in ("semantic_cache_pairs.jsonl", "semantic_cache_heldout.jsonl"):
        with open(os.path.join(ROOT, "tests", "data", name)) as f:
            for line in f:
                if line.strip():
                    record = json.loads(line)
                    texts += [record["question"]] + record["paraphrases"] + [m["text"] for m in record["near_misses"]]
    return sorted(set(texts))


def start_surge(surge, model, threads):
    command = [surge, "serve", model, "--host", "127.0.0.1", "--port", "0", "--threads", str(threads)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for _ in range(1000):
        line = proc.stdout.readline()
        match = re.search(r"ready on (http://\S+)", line or "")
        if match:
            return proc, match.group(1)
        if not line:
            break
    proc.kill()
    raise RuntimeError("surge serve did not start")


def surge_rate(url, texts, batch, min_seconds):
    def post(inputs):
        body = json.dumps({"input": inputs}).encode()
        request = urllib.request.Request(url + "/v1/embeddings", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=300) as response:
            assert len(json.loads(response.read())["data"]) == len(inputs)
    post(texts[:batch])  # warm-up
    done, start, i = 0, time.perf_counter(), 0
    while time.perf_counter() - start < min_seconds or done < 4 * batch:
        chunk = [texts[(i + j) % len(texts)] for j in range(batch)]
        post(chunk)
        done, i = done + batch, i + batch
    return done / (time.perf_counter() - start)


def st_rate(model, texts, batch, min_seconds):
    model.encode(texts[:batch], batch_size=batch)  # warm-up
    done, start, i = 0, time.perf_counter(), 0
    while time.perf_counter() - start < min_seconds or done < 4 * batch:
        chunk = [texts[(i + j) % len(texts)] for j in range(batch)]
        model.encode(chunk, batch_size=batch, normalize_embeddings=True)
        done, i = done + batch, i + batch
    return done / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--surge", default=os.path.join(ROOT, "build", "surge"))
    parser.add_argument("--model", default=os.path.join(ROOT, "models", "all-MiniLM-L6-v2"))
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--seconds", type=float, default=10.0, help="minimum seconds per measurement")
    args = parser.parse_args()
    texts = load_texts()
    import torch  # noqa: E402  (the comparison environment only)
    from sentence_transformers import SentenceTransformer  # noqa: E402
    torch.set_num_threads(args.threads)
    st = SentenceTransformer(args.model, device="cpu")
    proc, url = start_surge(args.surge, args.model, args.threads)
    results = {}
    try:
        for batch in (1, 64):
            results[batch] = (surge_rate(url, texts, batch, args.seconds), st_rate(st, texts, batch, args.seconds))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    print(f"{len(texts)} distinct inputs; {args.threads} threads; torch {torch.__version__}")
    for batch, (surge, st_value) in results.items():
        print(f"batch {batch:2d}: surge {surge:8.1f} inputs/s   sentence-transformers {st_value:8.1f} inputs/s   "
              f"ratio {surge / st_value:.2f}")


if __name__ == "__main__":
    main()
