#!/usr/bin/env python3
"""Scale-up reaction of `surge route --autoscale` with the local actuator (issue 15's target).

One spawned worker idles; at t0 a step of load starts (surge bench at a fixed request rate
the one worker cannot keep up with). The script timestamps the router's stderr lines as they
arrive and polls /health every 50 ms, and reports: t0 -> the autoscaler's scale-up decision,
decision -> the new worker routable (process start, model load, /health), the total, and the
bench's TTFT percentiles over the whole step.

  /usr/bin/python3 scripts/bench_scale_reaction.py [--model models/stories260K] [--rate 24]
      [--duration 40] [--interval 1s] [--out /tmp/reaction]
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


def routable(url):
    try:
        with urllib.request.urlopen(url + "/health", timeout=1) as r:
            return json.load(r).get("num_routable_backends", 0)
    except OSError:
        return -1


def start_router(args, policy):
    cmd = [SURGE, "route", "--host", "127.0.0.1", "--port", "0", "--spawn", "1", "--model", args.model,
           "--autoscale", policy, "--health-interval-ms", "100", "--worker-log-dir", args.out + ".logs", "--", "--threads", "1", "--max-num-seqs", "4"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []  # (monotonic seconds, line)
    threading.Thread(target=lambda: [lines.append((time.monotonic(), l)) for l in proc.stderr], daemon=True).start()
    for line in proc.stdout:
        m = re.search(r"ready on (http://\S+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, m.group(1), lines
    raise SystemExit("surge route exited before its ready line:\n" + "".join(l for _, l in lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="models/stories260K")
    p.add_argument("--rate", type=float, default=150, help="requests per second in the step")
    p.add_argument("--duration", type=int, default=40, help="seconds of step load")
    p.add_argument("--interval", default="1s", help="the autoscaler's evaluation interval")
    p.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "reaction"))
    args = p.parse_args()
    policy = args.out + ".policy.json"
    os.makedirs(args.out + ".logs", exist_ok=True)
    with open(policy, "w") as f:
        json.dump({"interval": args.interval, "pools": {"default": {
            "min_replicas": 1, "max_replicas": 2, "targets": {"queue_depth_per_replica": 2},
            "scale_up": {"stabilization": "0s"}, "scale_down": {"stabilization": "10m"}}}}, f)
    proc, url, lines = start_router(args, policy)
    try:
        time.sleep(2)
        t0 = time.monotonic()
        bench = subprocess.Popen([SURGE, "bench", "--url", url, "--request-rate", str(args.rate), "--arrival",
                                  "constant", "--duration", f"{args.duration}s", "--input-len", "32", "--output-len",
                                  "128", "--json", args.out + ".bench.json"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        t_serving = None
        while bench.poll() is None:
            if t_serving is None and routable(url) >= 2:
                t_serving = time.monotonic()
            time.sleep(0.05)
        decision = next((t for t, l in lines if re.search(r"autoscale pool default: 1 -> 2", l)), None)
        with open(args.out + ".bench.json") as f:
            bench_json = json.load(f)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    step = bench_json["rounds"][0]
    ttft = {k: step["ttft_ms"][k] for k in ("median", "p95", "p99")}
    result = {
        "step_to_decision_s": round(decision - t0, 2) if decision else None,
        "decision_to_serving_s": round(t_serving - decision, 2) if decision and t_serving else None,
        "step_to_serving_s": round(t_serving - t0, 2) if t_serving else None,
        "ttft_ms_during_step": ttft,
        "num_requests": step.get("num_requests"), "num_failed": step.get("failed"),
        "rate": args.rate, "interval": args.interval,
    }
    print(json.dumps(result, indent=1))
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=1)
    return 0 if t_serving else 1


if __name__ == "__main__":
    sys.exit(main())
