#!/usr/bin/env python3
"""Median latency of one keep-alive client's sequential max_tokens-1 completions, streamed and
not, through URL (docs/GATEWAYS.md: sgl-router's streamed answers). TCP_NODELAY on the client;
--quickack also sets TCP_QUICKACK before each request, to rule the client's delayed ACK out.

  scripts/stream_vs_plain_latency.py http://127.0.0.1:PORT [--model scripted-model] [--requests 40] [--quickack]
"""
import argparse
import http.client
import socket
import statistics
import time
import urllib.parse


def median_ms(url, model, stream, requests, quickack):
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    body = '{"model": "%s", "prompt": "hi", "max_tokens": 1, "stream": %s}' % (model, "true" if stream else "false")
    times = []
    for _ in range(requests):
        if quickack:
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        start = time.perf_counter()
        conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        conn.getresponse().read()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times[5:])  # the first few warm the connection and the gateway


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url")
    parser.add_argument("--model", default="scripted-model")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--quickack", action="store_true")
    args = parser.parse_args()
    url = urllib.parse.urlparse(args.url)
    for stream in (True, False):
        print(f"{args.url} {'streamed' if stream else 'plain   '} median "
              f"{median_ms(url, args.model, stream, args.requests, args.quickack):.2f} ms")


if __name__ == "__main__":
    main()
