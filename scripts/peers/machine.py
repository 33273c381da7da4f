#!/usr/bin/env python3
"""The top of the comparison's report (scripts/peers/run.sh): the machine's description, its
measured limits (build/matmul_bench's BM_Limits: memory read GB/s, f32/int8/bf16 peaks), the
settings every engine shares, and the load average before and after.

  scripts/peers/machine.py start META.json --engines ... --workloads ... --clients ... --concurrency ...
  scripts/peers/machine.py done META.json
"""
import argparse
import json
import os
import pathlib
import platform
import subprocess
import time

REPO = pathlib.Path(__file__).resolve().parent.parent.parent


def cpu_model():
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def memory_gib():
    for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 2**20, 1)
    return None


def loadavg():
    return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])


def limits(bench):
    """BM_Limits' counters, or why there are none."""
    if not bench.exists():
        return f"not measured: {bench} is not built (cmake --build build --target matmul_bench)"
    try:
        run = subprocess.run([str(bench), "--benchmark_filter=BM_Limits", "--benchmark_format=json"],
                             capture_output=True, text=True, timeout=300, check=True)
        counters = json.loads(run.stdout)["benchmarks"][0]
        return {k: v for k, v in counters.items() if k.endswith("/s") or k == "threads"}
    except (subprocess.SubprocessError, ValueError, KeyError, IndexError) as e:
        return f"not measured: {type(e).__name__}: {e}"


def settings():
    keys = ["PEERS_MAX_MODEL_LEN", "PEERS_KV_GIB", "PEERS_MAX_SEQS", "PEERS_THREADS", "REQUESTS_PER_C",
            "REQUESTS_MIN", "OUTPUT_CAP", "GGUF", "LLAMA_SERVER"]
    return {k: os.environ[k] for k in keys if k in os.environ}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=["start", "done"])
    parser.add_argument("meta")
    for flag in ["engines", "workloads", "clients", "concurrency"]:
        parser.add_argument(f"--{flag}", default="")
    args = parser.parse_args()
    path = pathlib.Path(args.meta)
    if args.step == "start":
        meta = {"started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpu": cpu_model(),
                "cores": os.cpu_count(), "memory_gib": memory_gib(), "kernel": platform.release(),
                "loadavg_before": loadavg(), "BM_Limits": limits(REPO / "build/matmul_bench"),
                "engines": args.engines, "workloads": args.workloads, "clients": args.clients,
                "concurrency": args.concurrency, "settings": settings()}
    else:
        meta = json.loads(path.read_text())
        meta.update(finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), loadavg_after=loadavg())
    path.write_text(json.dumps(meta, indent=2) + "\n")


if __name__ == "__main__":
    main()
