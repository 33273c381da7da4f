#!/usr/bin/env python3
"""The seed day replayed live at small scale, beside `surge scale simulate` (issue 15's target:
the live replica curve matches the simulation's).

1. Measures one worker (`surge serve` on the bundled model with the workers' flags) with a
   `surge bench` rate sweep: the capacity model both the simulation and the trace are sized by,
   the engine's busy fraction at each rate included (the bench reads it from /metrics).
2. Builds the trace: the seed's diurnal hourly weights (autoscale/examples/diurnal_profile.json),
   one point every 24/MINUTES hours, scaled so the peak is --peak-load times one worker's
   measured throughput; one trace point per real minute.
3. Simulates it: `surge scale simulate` with the same policy file.
4. Replays it live: `surge route --spawn 1 --autoscale POLICY` and, each minute, a `surge bench`
   at that minute's rate (Poisson arrivals); the replicas on the autoscaler's books
   (surge_autoscale_replicas) and the routable backends are sampled every second.
5. Prints both curves minute by minute (mean over the minute) and their difference.

  /usr/bin/python3 scripts/bench_scale_replay.py [--minutes 12] [--peak-load 1.2] [--out /tmp/replay]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SURGE = os.path.join(ROOT, "build", "surge")
MODEL = "models/stories260K"
WORKER_ARGS = ["--threads", "1", "--max-num-seqs", "4"]
LOAD = ["--input-len", "16", "--output-len", "256", "--ignore-eos", "--calibrate=false", "--timeout", "30s"]


def policy(max_replicas):
    """Busy-fraction target, windows shortened for a day that lasts --minutes minutes."""
    return {"interval": "2s", "pools": {"default": {
        "min_replicas": 1, "max_replicas": max_replicas, "targets": {"busy_fraction": 0.5}, "tolerance": 0.1,
        "scale_up": {"stabilization": "0s", "period": "2s"},
        "scale_down": {"stabilization": "30s", "max_percent": 50, "period": "10s"}}}}


def wait_ready(proc, pattern=r"ready on (http://\S+)", timeout_s=60):
    deadline = time.monotonic() + timeout_s
    for line in proc.stdout:
        match = re.search(pattern, line)
        if match:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return match.group(1)
        if time.monotonic() > deadline:
            break
    raise SystemExit("no ready line")


def measure_worker(out):
    proc = subprocess.Popen([SURGE, "serve", MODEL, "--host", "127.0.0.1", "--port", "0", *WORKER_ARGS], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = wait_ready(proc)
        bench = out + ".worker_bench.json"
        subprocess.run([SURGE, "bench", "--url", url, "--request-rate", "5,10,20,30,40,60,80", "--duration", "8s",
                        *LOAD, "--json", bench], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        rounds = json.load(open(bench))["rounds"]
        print("one worker: " + ", ".join(f"{r['request_throughput']:.1f} req/s busy {r['server_busy_fraction']:.2f}"
                                         for r in rounds), flush=True)
        return bench, max(r["request_throughput"] for r in rounds)
    finally:
        proc.terminate()
        proc.wait()


def trace(minutes, peak_qps):
    weights = json.load(open(os.path.join(ROOT, "autoscale", "examples", "diurnal_profile.json")))
    step = len(weights) / minutes
    return [round(max(peak_qps * weights[int(i * step)], 1.0), 2) for i in range(minutes)]


def simulate(out, bench, trace_csv, policy_file):
    sim = out + ".sim.json"
    subprocess.run([SURGE, "scale", "simulate", "--bench", bench, "--trace", trace_csv, "--policy", policy_file,
                    "--startup-delay", "1s", "--slo-ttft-p95", "2", "--html", out + ".sim.html", "--json", sim],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    series = json.load(open(sim))["series"]
    ready = [sum(c[i] for c in series["ready_by_class"].values()) for i in range(len(series["demand_qps"]))]
    return [r + p for r, p in zip(ready, series["pending"])]


def sample_replicas(url):
    with urllib.request.urlopen(url + "/metrics", timeout=2) as response:
        text = response.read().decode()
    books = sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith("surge_autoscale_replicas{"))
    with urllib.request.urlopen(url + "/health", timeout=2) as response:
        routable = json.load(response).get("num_routable_backends", 0)
    return books, routable


def replay(out, qps_per_minute, policy_file):
    router = subprocess.Popen([SURGE, "route", "--host", "127.0.0.1", "--port", "0", "--spawn", "1", "--model", MODEL,
                               "--autoscale", policy_file, "--health-interval-ms", "200", "--", *WORKER_ARGS],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=open(out + ".route.log", "w"), text=True)
    samples = []  # (minute, books, routable)
    benches = []
    try:
        url = wait_ready(router)
        start = time.monotonic()
        stop = threading.Event()

        def sampler():
            while not stop.wait(1.0):
                minute = int((time.monotonic() - start) // 60)
                try:
                    samples.append((minute, *sample_replicas(url)))
                except OSError:
                    pass
        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        for minute, qps in enumerate(qps_per_minute):
            time.sleep(max(0.0, start + 60 * minute - time.monotonic()))
            benches.append(subprocess.Popen(
                [SURGE, "bench", "--url", url, "--request-rate", str(qps), "--duration", "59s", *LOAD,
                 "--json", f"{out}.minute{minute}.json"], cwd=ROOT, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
        time.sleep(max(0.0, start + 60 * len(qps_per_minute) - time.monotonic()))
        stop.set()
        for bench in benches:
            bench.wait()
    finally:
        router.terminate()
        router.wait()
    failed = sum(json.load(open(f"{out}.minute{m}.json"))["rounds"][0]["failed"] for m in range(len(qps_per_minute)))
    done = sum(json.load(open(f"{out}.minute{m}.json"))["rounds"][0]["completed"] for m in range(len(qps_per_minute)))
    per_minute = []
    for minute in range(len(qps_per_minute)):
        rows = [s for s in samples if s[0] == minute]
        per_minute.append((sum(s[1] for s in rows) / max(len(rows), 1), sum(s[2] for s in rows) / max(len(rows), 1)))
    return per_minute, done, failed


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=int, default=12, help="the day's length here, one trace point per minute")
    p.add_argument("--peak-load", type=float, default=1.2, help="peak demand in units of one worker's throughput")
    p.add_argument("--max-replicas", type=int, default=4)
    p.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "replay"))
    args = p.parse_args()
    bench, worker_qps = measure_worker(args.out)
    qps = trace(args.minutes, args.peak_load * worker_qps)
    trace_csv = args.out + ".trace.csv"
    open(trace_csv, "w").write("qps\n" + "\n".join(map(str, qps)) + "\n")
    policy_file = args.out + ".policy.json"
    json.dump(policy(args.max_replicas), open(policy_file, "w"))
    simulated = simulate(args.out, bench, trace_csv, policy_file)
    live, done, failed = replay(args.out, qps, policy_file)
    print(f"one worker: {worker_qps:.1f} req/s at saturation ({' '.join(WORKER_ARGS)}); peak {max(qps):.1f} req/s")
    print(f"{'minute':>6} {'demand':>7} {'sim replicas':>12} {'live replicas':>13} {'live routable':>13}")
    diffs = []
    for minute, (q, s, (books, routable)) in enumerate(zip(qps, simulated, live)):
        diffs.append(abs(books - s))
        print(f"{minute:6d} {q:7.1f} {s:12.2f} {books:13.2f} {routable:13.2f}")
    print(f"mean |live - sim| = {sum(diffs) / len(diffs):.2f} replicas, max {max(diffs):.2f}; "
          f"peak sim {max(simulated):.0f}, live {max(b for b, _ in live):.0f}; requests {done} done, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
