#!/usr/bin/env python3
"""surge's /v1/embeddings on a BERT sentence encoder (all-MiniLM-L6-v2, a real `surge
serve`) against bert_numpy_reference.py, an independent numpy implementation.

Every second string of bert_corpus.py (600; the empty one aside: the API refuses it) plus long inputs
that must be truncated to max_seq_length, sent 64 per request so that they batch: cosine
similarity >= 0.9999 for every vector, and usage.prompt_tokens equal to the reference's
token count. Then --pooling cls on a subset, and the generation routes' 400.

  .venv/bin/python tests/reference/test_bert_vs_reference.py --surge build/surge
"""
import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: small matrices, a shared machine
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # tests/: live_fleet
import bert_corpus  # noqa: E402
from live_fleet import SurgeProcess  # noqa: E402
import bert_numpy_reference  # noqa: E402

MODEL = os.path.join(ROOT, "models", "all-MiniLM-L6-v2")
MIN_COSINE = 0.9999


def start_server(surge, extra):
    return SurgeProcess(surge, ["serve", MODEL, "--host", "127.0.0.1", "--port", "0", "--threads", "2", *extra],
                        timeout_s=120)


def post(base_url, path, body):
    request = urllib.request.Request(base_url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def embed_all(base_url, texts, batch=64):
    vectors, tokens = [], 0
    for i in range(0, len(texts), batch):
        status, body = post(base_url, "/v1/embeddings", {"model": "all-MiniLM-L6-v2", "input": texts[i:i + batch]})
        assert status == 200, body
        vectors += [d["embedding"] for d in sorted(body["data"], key=lambda d: d["index"])]
        tokens += body["usage"]["prompt_tokens"]
    return np.asarray(vectors, dtype=np.float64), tokens


def compare(name, got, texts, ref, pooling, failures):
    cosines = []
    for i, text in enumerate(texts):
        want = ref.embed(text, pooling)
        cosine = float(got[i] @ want / (np.linalg.norm(got[i]) * np.linalg.norm(want)))
        cosines.append(cosine)
        if not cosine >= MIN_COSINE:
            failures.append(f"{name}: {text[:60]!r} cosine {cosine:.6f}")
        if abs(np.linalg.norm(got[i]) - 1.0) > 1e-4:
            failures.append(f"{name}: {text[:60]!r} norm {np.linalg.norm(got[i]):.6f}")
    print(f"  {name}: {len(texts)} vectors, min cosine {min(cosines):.7f}, mean {np.mean(cosines):.7f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--surge", required=True, help="path to the surge binary")
    args = parser.parse_args()
    ref = bert_numpy_reference.BertReference(MODEL)
    long_texts = [" ".join(bert_corpus.WORDS[(i * 7) % 50:] * 6) for i in range(4)]
    texts = [t for t in bert_corpus.corpus()[::2] if t] + long_texts
    failures, start = [], time.time()
    server = start_server(args.surge, [])
    try:
        got, num_tokens = embed_all(server.url, texts)
        status, body = post(server.url, "/v1/completions", {"model": "all-MiniLM-L6-v2", "prompt": "hi"})
        if status != 400 or "sentence encoder" not in body["error"]["message"]:
            failures.append(f"/v1/completions on an encoder: {status} {body}")
    finally:
        server.stop()
    want_tokens = sum(len(ref.ids(t)) for t in texts)
    if num_tokens != want_tokens:
        failures.append(f"usage.prompt_tokens {num_tokens}, reference {want_tokens}")
    compare("mean (the model's own)", got, texts, ref, None, failures)
    subset = texts[::25] + long_texts
    server = start_server(args.surge, ["--pooling", "cls"])
    try:
        got_cls, _ = embed_all(server.url, subset)
    finally:
        server.stop()
    compare("--pooling cls", got_cls, subset, ref, "cls", failures)
    print(f"  {time.time() - start:.1f}s; minimum cosine {MIN_COSINE}")
    for failure in failures[:20]:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
