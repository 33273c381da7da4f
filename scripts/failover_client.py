#!/usr/bin/env python3
"""The failover client of scripts/bench_gateways.sh: non-streaming completions at a constant
RATE for SECONDS through URL, each request on its own thread (stdlib only), and at KILL_AT
seconds `kill -9 PID` (an engine behind the gateway). Prints one JSON line: requests sent,
failed (not 200, or no answer), and the first and last failure's start after the kill (s;
0: only requests in flight at the kill failed).

  scripts/failover_client.py URL MODEL PID [--rate 100] [--seconds 8] [--kill-at 3] [--max-tokens 16]
"""
import argparse
import http.client
import json
import os
import signal
import threading
import time
import urllib.parse


def send(url, body, timeout_s, results, lock):
    start = time.monotonic()
    status = 0
    try:
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout_s)
        conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        status = response.status
        conn.close()
    except (OSError, http.client.HTTPException):
        status = 0
    with lock:
        results.append((start, status))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url")
    parser.add_argument("model")
    parser.add_argument("pid", type=int)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--kill-at", type=float, default=3)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()
    url = urllib.parse.urlparse(args.url)
    body = json.dumps({"model": args.model, "prompt": "Once upon a time", "max_tokens": args.max_tokens})
    results, lock, threads = [], threading.Lock(), []
    begin = time.monotonic()
    killed_at = None
    for i in range(int(args.rate * args.seconds)):
        due = begin + i / args.rate
        time.sleep(max(0.0, due - time.monotonic()))
        if killed_at is None and time.monotonic() - begin >= args.kill_at:
            os.kill(args.pid, signal.SIGKILL)
            killed_at = time.monotonic()
        thread = threading.Thread(target=send, args=(url, body, args.timeout, results, lock))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    failures = sorted(start - killed_at for start, status in results if status != 200) if killed_at else []
    print(json.dumps({"sent": len(results), "failed": len(failures),
                      "first_failure_s": round(failures[0], 3) if failures else None,
                      "last_failure_s": round(max(0.0, failures[-1]), 3) if failures else 0.0}))


if __name__ == "__main__":
    main()
