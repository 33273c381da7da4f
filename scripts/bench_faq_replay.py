#!/usr/bin/env python3
"""FAQ traffic replayed through `surge route` with the exact and semantic caches in front of real
`surge serve` engines (issue 17's closing targets): hit rate by kind, P50/P95 latency of hits and
misses, and the engines' output tokens per second the cache saved.

The questions: every question of the labelled sets (tests/data/semantic_cache_pairs.jsonl and
semantic_cache_heldout.jsonl) with its paraphrases, and every near miss there as a question of its
own -- a few hundred distinct questions. Each request picks one with Zipf weights (s = --zipf, the
rank order shuffled), and a question with paraphrases is asked in one of them with probability
--paraphrase-share (else in its own words). Chat requests, temperature 0 (cacheable), --max-tokens
each, --concurrency at a time, --num-requests in all (or until --max-seconds pass).

A semantic hit is checked: the question it was answered from is the missed (so stored) one whose
live answer has the same content and whose embedding's cosine similarity with the hit's query is
the similarity the router reported (x-surge-cache-similarity, 4 decimals; the embeddings server
is asked again after the run, for the normalized texts the router embeds). A hit answered from
another question's group (a near miss answered by the question it resembles, say) is a false hit.

Saved tokens: the completion tokens of every answer the cache served (usage of the stored answer);
the engines' surge_generation_tokens_total before and after shows what they generated themselves.

Embeddings (--embeddings): use-lite (default), hashed, minilm (models/all-MiniLM-L6-v2 on its own
surge serve, --embeddings-url) or minilm-spawn (the router starts it: --embeddings-spawn).

  /usr/bin/python3 scripts/bench_faq_replay.py [--engines 2] [--num-requests 2000] [--concurrency 32]
"""
import argparse
import collections
import http.client
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SURGE = os.path.join(ROOT, "build", "surge")
LABELLED_SETS = ("tests/data/semantic_cache_pairs.jsonl", "tests/data/semantic_cache_heldout.jsonl")
EMBEDDINGS_SERVERS = {"use-lite": "tests/node/sentence_embeddings_server.mjs", "hashed": "scripts/hashed_embeddings_server.mjs"}
# A sentence encoder on surge serve: "minilm" runs it beside the router (--embeddings-url),
# "minilm-spawn" lets the router start it itself (--embeddings-spawn); the check after the run
# embeds with a surge serve of the same model either way.
MINILM = "models/all-MiniLM-L6-v2"


def start_embeddings(kind):
    """(process, the /v1 base URL) of the embeddings server the check (and --embeddings-url) uses."""
    if kind in EMBEDDINGS_SERVERS:
        return start(["node", EMBEDDINGS_SERVERS[kind], "0"])
    proc, url = start([SURGE, "serve", MINILM, "--host", "127.0.0.1", "--port", "0", "--threads", "1"])
    return proc, url + "/v1"
SYSTEM = "You answer customer questions."


def start(command, pattern=r"ready on (http://\S+)"):
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = next(m.group(1) for line in proc.stdout if (m := re.search(pattern, line)))
    return proc, url


def questions():
    """[(group, [wordings])]: a labelled question with its paraphrases is one group; a near miss its own."""
    groups = []
    for path in LABELLED_SETS:
        for line in open(os.path.join(ROOT, path)):
            row = json.loads(line)
            groups.append([row["question"], *row["paraphrases"]])
            groups += [[m["text"]] for m in row["near_misses"]]
    return list(enumerate(groups))


def schedule(args):
    """The requests' texts in order, and the group of every text."""
    rng = random.Random(args.seed)
    groups = questions()
    rng.shuffle(groups)
    weights = [1 / (rank + 1) ** args.zipf for rank in range(len(groups))]
    group_of = {text: group for group, wordings in groups for text in wordings}
    texts = []
    for group, wordings in rng.choices(groups, weights, k=args.num_requests):
        paraphrase = len(wordings) > 1 and rng.random() < args.paraphrase_share
        texts.append(rng.choice(wordings[1:]) if paraphrase else wordings[0])
    return texts, group_of, len(groups)


def engine_tokens(urls):
    total = 0.0
    for url in urls:
        text = urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
        total += sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith("surge_generation_tokens_total"))
    return total


def send(connection, text, max_tokens):
    body = json.dumps({"model": "stories260K", "temperature": 0, "max_tokens": max_tokens,
                       "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]})
    start = time.perf_counter()
    connection.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
    response = connection.getresponse()
    data = json.loads(response.read())
    latency_ms = 1e3 * (time.perf_counter() - start)
    if response.status != 200:
        return {"text": text, "status": response.status, "latency_ms": latency_ms}
    cache = response.getheader("x-surge-cache", "none")
    kind = response.getheader("x-surge-cache-kind", "") if cache == "hit" else ""
    return {"text": text, "status": 200, "latency_ms": latency_ms, "cache": cache, "kind": kind,
            "similarity": float(response.getheader("x-surge-cache-similarity", "0") or 0),
            "content": data["choices"][0]["message"]["content"], "tokens": data["usage"]["completion_tokens"]}


def replay(router_url, texts, args):
    """Sends every text, --concurrency at a time; the results in order and the wall time."""
    address = urllib.parse.urlparse(router_url)
    results = [None] * len(texts)
    next_index = iter(range(len(texts)))
    lock = threading.Lock()
    deadline = time.monotonic() + args.max_seconds

    def worker():
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=120)
        while time.monotonic() < deadline:
            with lock:
                i = next(next_index, None)
            if i is None:
                return
            results[i] = send(connection, texts[i], args.max_tokens)

    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [r for r in results if r is not None], time.perf_counter() - start


def percentiles(results):
    latencies = sorted(r["latency_ms"] for r in results)
    if not latencies:
        return "none"
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    return f"{len(latencies)} requests, P50 {p(0.50):.1f} ms, P95 {p(0.95):.1f} ms"


def normalized(text):
    """router/cache/semantic_guard.h's NormalizeQueryText: what the router embeds."""
    return " ".join(text.split()).lower().rstrip("?.! ")


def embed_all(embeddings_url, texts):
    """One call per text, as the router embeds (a batch might pad differently)."""
    vectors = {}
    for text in texts:
        request = urllib.request.Request(embeddings_url + "/embeddings", json.dumps({"input": text}).encode(),
                                         {"content-type": "application/json"})
        vectors[text] = json.loads(urllib.request.urlopen(request, timeout=60).read())["data"][0]["embedding"]
    return vectors


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / max((sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5, 1e-12)


def check_semantic_hits(results, group_of, vectors):
    """(verdicts, false hits): which stored question did each semantic hit replay?"""
    stored = collections.defaultdict(set)  # content -> texts whose live answer it was
    for r in results:
        if r["status"] == 200 and r["cache"] != "hit":
            stored[r["content"]].add(r["text"])
    verdicts = collections.Counter()
    false_hits = []
    for r in results:
        if r["status"] != 200 or r["kind"] != "semantic":
            continue
        query = vectors[normalized(r["text"])]
        sources = [t for t in stored.get(r["content"], ())
                   if abs(cosine(query, vectors[normalized(t)]) - r["similarity"]) < 6e-4]
        if len({group_of[t] for t in sources}) != 1:
            verdicts["unknown"] += 1
        elif group_of[sources[0]] == group_of[r["text"]]:
            verdicts["true"] += 1
        else:
            verdicts["false"] += 1
            false_hits.append((r, sources[0]))
    return verdicts, false_hits


def report(results, wall_s, tokens_generated, group_of, vectors, num_groups, args):
    ok = [r for r in results if r["status"] == 200]
    hits = [r for r in ok if r["cache"] == "hit"]
    exact = [r for r in hits if r["kind"] == "exact"]
    semantic = [r for r in hits if r["kind"] == "semantic"]
    misses = [r for r in ok if r["cache"] != "hit"]
    n = len(ok)
    print(f"{len(results)} requests ({len(set(r['text'] for r in results))} distinct texts of {num_groups} questions), "
          f"{len(results) - n} failed, wall {wall_s:.1f} s, {len(results) / wall_s:.1f} req/s, concurrency {args.concurrency}")
    print(f"hits: {100 * len(hits) / n:.1f}% (exact {100 * len(exact) / n:.1f}%, semantic {100 * len(semantic) / n:.1f}%; "
          f"semantic hits among exact misses {100 * len(semantic) / max(n - len(exact), 1):.1f}%)")
    verdicts, false_hits = check_semantic_hits(ok, group_of, vectors)
    print(f"semantic hits checked: {verdicts['true']} right question, {verdicts['false']} another question's answer "
          f"(false hits: {100 * verdicts['false'] / max(len(semantic), 1):.1f}% of semantic hits, "
          f"{100 * verdicts['false'] / n:.2f}% of requests), {verdicts['unknown']} not attributable")
    for r, source in false_hits[:10]:
        print(f"  false hit ({r['similarity']:.4f}): {r['text']!r} answered from {source!r}")
    print(f"latency exact hits: {percentiles(exact)}")
    print(f"latency semantic hits: {percentiles(semantic)}")
    print(f"latency misses: {percentiles(misses)}")
    served = sum(r["tokens"] for r in hits)
    delivered = sum(r["tokens"] for r in ok)
    print(f"completion tokens: {delivered} delivered, {tokens_generated:.0f} generated by the engines, {served} served "
          f"from the cache ({100 * served / max(delivered, 1):.1f}%)")
    print(f"engine output tok/s: {tokens_generated / wall_s:.1f} generated; saved {served / wall_s:.1f} tok/s "
          f"(cache-served tokens over the run's wall time)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--engines", type=int, default=2)
    p.add_argument("--num-requests", type=int, default=2000)
    p.add_argument("--max-seconds", type=float, default=300)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--zipf", type=float, default=1.0)
    p.add_argument("--paraphrase-share", type=float, default=0.3)
    p.add_argument("--threshold", default="0.94")
    p.add_argument("--embeddings", choices=(*EMBEDDINGS_SERVERS, "minilm", "minilm-spawn"), default="use-lite")
    p.add_argument("--embeddings-timeout-ms", default="5000")
    p.add_argument("--seed", type=int, default=17)
    args = p.parse_args()
    texts, group_of, num_groups = schedule(args)
    procs = []
    try:
        engines = []
        for _ in range(args.engines):
            proc, url = start([SURGE, "serve", "models/stories260K", "--host", "127.0.0.1", "--port", "0",
                               "--threads", "1", "--chat-template", "tests/data/chat_template_simple.jinja"])
            procs.append(proc)
            engines.append(url)
        embedder, embeddings_url = start_embeddings(args.embeddings)
        procs.append(embedder)
        encoder = (["--embeddings-spawn", MINILM] if args.embeddings == "minilm-spawn"
                   else ["--embeddings-url", embeddings_url])
        router, router_url = start([SURGE, "route", "--host", "127.0.0.1", "--port", "0",
                                    *[a for url in engines for a in ("--backend", url)], "--cache", "memory",
                                    "--semantic", *encoder,
                                    "--semantic-threshold", args.threshold,
                                    "--embeddings-timeout-ms", args.embeddings_timeout_ms])
        procs.append(router)
        before = engine_tokens(engines)
        results, wall_s = replay(router_url, texts, args)
        tokens_generated = engine_tokens(engines) - before
        metrics = urllib.request.urlopen(router_url + "/metrics", timeout=5).read().decode()
        vectors = embed_all(embeddings_url, sorted({normalized(r["text"]) for r in results}))
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait()
    report(results, wall_s, tokens_generated, group_of, vectors, num_groups, args)
    sample = lambda prefix: sum(float(l.split()[-1]) for l in metrics.splitlines() if l.startswith(prefix))
    print(f"router cache errors (embeddings timeouts included): {sample('surge_router_cache_errors_total{'):.0f}; "
          f"embedding calls {sample('surge_router_cache_embedding_seconds_count'):.0f}, mean "
          f"{1e3 * sample('surge_router_cache_embedding_seconds_sum') / max(sample('surge_router_cache_embedding_seconds_count'), 1):.1f} ms; "
          f"guard rejections {sample('surge_router_cache_semantic_guard_rejections_total'):.0f}")
    return 0 if all(r["status"] == 200 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
