#!/usr/bin/env python3
"""The response cache's lookup cost at a fixed request rate (issue 17's targets: <= 0.2 ms P99
exact, <= 2 ms P99 plus the embedding call semantic, at 1,000 req/s).

--kind exact (default): one `surge serve` on the bundled model behind `surge route --cache memory`.
A jsonl dataset of --distinct completion bodies (temperature 0, so cacheable) repeated with Zipf
weights goes through `surge bench --request-rate RATE` (Poisson); afterwards the router's
surge_router_cache_lookup_seconds histogram gives the lookup P50/P99 (Prometheus-style
interpolation inside the bucket), and its hit/miss counters the hit rate.

--kind semantic: the router adds `--semantic --embeddings-url` to an embeddings server, and the
requests are chats (the semantic kind looks up chat only) whose last user message is one of
--distinct FAQ texts (the labelled sets' questions and paraphrases, tests/data/semantic_cache_*.jsonl)
picked with Zipf weights. Each text is asked once before the measured round (stored). In the round,
a request is that text as it was (an exact hit) with probability --exact-share, else a whitespace
variant of it never sent before: a distinct exact key (an exact miss) and the same normalized query
(NormalizeQueryText collapses whitespace), so it goes through the embedding and the semantic
lookup, and hits. --fresh of the requests are new questions (semantic misses: forwarded to the
engine and filed in the index). Reported, over the round only (the metrics read before and after):
surge_router_cache_semantic_search_seconds (the lookup after its embedding came back: index
search, guard, the answer's read), surge_router_cache_embedding_seconds (the embeddings call
alone) and surge_router_cache_lookup_seconds{kind="semantic"} (both). --embeddings hashed (default)
is scripts/hashed_embeddings_server.mjs, a cheap deterministic bag-of-words server written for
this bench; --embeddings use-lite is Universal Sentence Encoder lite on TF.js
(tests/node/sentence_embeddings_server.mjs), the encoder the semantic tests use.

  /usr/bin/python3 scripts/bench_cache_lookup.py [--rate 1000] [--duration 10s] [--distinct 200]
  /usr/bin/python3 scripts/bench_cache_lookup.py --kind semantic [--embeddings hashed|use-lite] [--rate 1000]
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
EMBEDDINGS_SERVERS = {"hashed": "scripts/hashed_embeddings_server.mjs", "use-lite": "tests/node/sentence_embeddings_server.mjs"}
LABELLED_SETS = ("tests/data/semantic_cache_pairs.jsonl", "tests/data/semantic_cache_heldout.jsonl")
SYSTEM = "You answer customer questions."


def start(command, pattern=r"ready on (http://\S+)"):
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
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


def histogram(text, name, label_filter, before=""):
    """Cumulative (le, count) pairs of `name`, summed over the series whose labels contain label_filter,
    less those of the exposition `before`."""
    sums = {}
    for sign, line in [(1, l) for l in text.splitlines()] + [(-1, l) for l in before.splitlines()]:
        m = re.match(name + r'_bucket\{(.*)\} (\S+)', line)
        if m and label_filter in m.group(1):
            le = re.search(r'le="([^"]+)"', m.group(1)).group(1)
            key = float("inf") if le == "+Inf" else float(le)
            sums[key] = sums.get(key, 0.0) + sign * float(m.group(2))
    return sorted(sums.items())


def counter(text, name, label_filter, before=""):
    total = lambda t: sum(float(l.split()[-1]) for l in t.splitlines() if l.startswith(name + "{") and label_filter in l)
    return total(text) - total(before)


def at(buckets, q):
    """The q-quantile in ms, or "> LAST ms" when it lies beyond the last finite bucket."""
    finite = [(le, count) for le, count in buckets if le != float("inf")]
    if finite and finite[-1][1] < q * buckets[-1][1]:
        return f"> {1e3 * finite[-1][0]:g} ms"
    return f"{1e3 * quantile(buckets, q):.4f} ms"


def describe(label, buckets):
    if not buckets or buckets[-1][1] == 0:
        return f"{label}: no samples"
    return f"{label}: {buckets[-1][1]:.0f} samples, P50 {at(buckets, 0.5)}, P99 {at(buckets, 0.99)}"


def exact_dataset(rng, args):
    prompts = [" ".join(rng.choice(WORDS) for _ in range(10)) + f" #{i}" for i in range(args.distinct)]
    weights = [1 / (rank + 1) for rank in range(args.distinct)]  # Zipf, s = 1
    return [{"prompt": p, "max_tokens": 8, "temperature": 0} for p in rng.choices(prompts, weights, k=20000)]


def whitespace_variant(text, k):
    """The k-th spelling of `text` with other whitespace: gap i holds (k // 3^i) % 3 + 1 spaces, and
    k // 3^gaps trailing spaces; distinct for distinct k, the same text once whitespace collapses."""
    words = text.split(" ")
    out = words[0]
    for word in words[1:]:
        out += " " * (k % 3 + 1) + word
        k //= 3
    return out + " " * k


def chat(text):
    return {"model": "stories260K", "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}],
            "max_tokens": 4, "temperature": 0}


def semantic_texts(rng, args):
    texts = []
    for path in LABELLED_SETS:
        for line in open(os.path.join(ROOT, path)):
            row = json.loads(line)
            texts += [row["question"], *row["paraphrases"]]
    return rng.sample(texts, min(args.distinct, len(texts)))


def semantic_dataset(rng, args, texts):
    weights = [1 / (rank + 1) for rank in range(len(texts))]  # Zipf, s = 1
    seen = {}
    bodies = []
    for i in range(20000):
        if rng.random() < args.fresh:
            bodies.append(chat(f"Question {i}: " + " ".join(rng.choice(WORDS) for _ in range(8)) + "?"))
            continue
        base = rng.choices(texts, weights)[0]
        if rng.random() < args.exact_share:
            bodies.append(chat(base))
            continue
        seen[base] = seen.get(base, 0) + 1  # variant 0 is the text itself
        bodies.append(chat(whitespace_variant(base, seen[base])))
    return bodies


def post(url, body):
    request = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    urllib.request.urlopen(request, timeout=30).read()


def metrics(url):
    return urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()


def run(args, warm_up):
    """The router's metrics before and after the measured round."""
    engine_args = ["serve", "models/stories260K", "--host", "127.0.0.1", "--port", "0",
                   "--chat-template", "tests/data/chat_template_simple.jinja"]
    procs = []
    try:
        engine, engine_url = start([SURGE, *engine_args])
        procs.append(engine)
        route = [SURGE, "route", "--host", "127.0.0.1", "--port", "0", "--backend", engine_url, "--cache", "memory"]
        if args.kind == "semantic":
            embedder, embeddings_url = start(["node", EMBEDDINGS_SERVERS[args.embeddings], "0"])
            procs.append(embedder)
            route += ["--semantic", "--embeddings-url", embeddings_url, "--embeddings-timeout-ms", "5000"]
        router, url = start(route)
        procs.append(router)
        for body in warm_up:
            post(url, body)
        before = metrics(url)
        subprocess.run([SURGE, "bench", "--url", url, "--workload", "jsonl", "--dataset", args.out + ".jsonl",
                        "--endpoint", "chat" if args.kind == "semantic" else "completions",
                        "--request-rate", args.rate, "--duration", args.duration, "--calibrate=false",
                        "--json", args.out + ".json"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return before, metrics(url)
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait()


def report_exact(text, before=""):
    buckets = histogram(text, "surge_router_cache_lookup_seconds", 'kind="exact"', before)
    hits = counter(text, "surge_router_cache_hits_total", 'kind="exact"', before)
    misses = counter(text, "surge_router_cache_misses_total", 'kind="exact"', before)
    print(f"exact cache: {hits:.0f} hits, {misses:.0f} misses ({100 * hits / max(hits + misses, 1):.1f}% hits); "
          f"{describe('lookup', buckets)} (bucket bounds {', '.join(f'{le * 1e3:g}' for le, _ in buckets[:6])} ... ms)")


def report_semantic(text, before, embeddings):
    report_exact(text, before)
    hits = counter(text, "surge_router_cache_hits_total", 'kind="semantic"', before)
    misses = counter(text, "surge_router_cache_misses_total", 'kind="semantic"', before)
    entries = counter(text, "surge_router_cache_entries", 'kind="semantic"')
    print(f"semantic cache ({embeddings} embeddings): {hits:.0f} hits, {misses:.0f} misses "
          f"({100 * hits / max(hits + misses, 1):.1f}% hits), {entries:.0f} vectors in the index at the end")
    search = "surge_router_cache_semantic_search_seconds"
    print("  " + describe("search after the embedding (all)", histogram(text, search, "", before)))
    for outcome in ("hit", "miss"):
        print("  " + describe(f"search after the embedding ({outcome})",
                              histogram(text, search, f'outcome="{outcome}"', before)))
    print("  " + describe("embedding call (ok)",
                          histogram(text, "surge_router_cache_embedding_seconds", 'outcome="ok"', before)))
    print("  " + describe("whole semantic lookup (embedding included)",
                          histogram(text, "surge_router_cache_lookup_seconds", 'kind="semantic"', before)))
    errors = counter(text, "surge_router_cache_errors_total", 'kind="semantic"', before)
    print(f"  embeddings errors or timeouts: {errors:.0f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kind", choices=("exact", "semantic"), default="exact")
    p.add_argument("--embeddings", choices=tuple(EMBEDDINGS_SERVERS), default="hashed")
    p.add_argument("--rate", default="1000")
    p.add_argument("--duration", default="10s")
    p.add_argument("--distinct", type=int, default=200)
    p.add_argument("--exact-share", type=float, default=0.0, help="semantic: share of exact repeats")
    p.add_argument("--fresh", type=float, default=0.01, help="semantic: share of never-seen questions")
    p.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "cache_lookup"))
    args = p.parse_args()
    rng = random.Random(11)
    warm_up = []
    if args.kind == "exact":
        dataset = exact_dataset(rng, args)
    else:
        texts = semantic_texts(rng, args)
        warm_up = [chat(text) for text in texts]
        dataset = semantic_dataset(rng, args, texts)
    with open(args.out + ".jsonl", "w") as f:
        f.writelines(json.dumps(body) + "\n" for body in dataset)
    before, text = run(args, warm_up)
    result = json.load(open(args.out + ".json"))["rounds"][0]
    print(f"{result['request_throughput']:.0f} req/s achieved (target {args.rate}), {result['completed']} done, "
          f"{result['failed']} failed; E2E P50 {result['e2e_latency_ms']['median']:.2f} ms, "
          f"P99 {result['e2e_latency_ms']['p99']:.2f} ms")
    if args.kind == "exact":
        report_exact(text, before)
    else:
        report_semantic(text, before, args.embeddings)
    return 0 if result["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
