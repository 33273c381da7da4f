#!/usr/bin/env bash
# The HTTP share of serving: starts `surge serve MODEL` with SURGE_PHASE_PROFILE=1, runs one
# `surge bench` round per concurrency, and prints, per round, the seconds the engine thread
# spent in its steps (forward pass, batch, scheduling, sampling, publishing) beside the
# seconds the HTTP side spent (socket io, request handlers, encoding the stream) -- both from
# /metrics' surge_phase_seconds_total, before and after the round -- and the HTTP share of
# their sum. The per-phase split of a step itself: build/decode_profile (docs/DECODE_PROFILE.md).
#   scripts/decode_profile_serve.sh MODEL "1 8 32 64" ["BENCH FLAGS"] ["SERVE FLAGS"]
# e.g. scripts/decode_profile_serve.sh /tmp/llama110m.q8_0.gguf "1 8 32 64" \
#        "--input-len 256 --output-len 64"
# Each round sends max(2c, 8) requests (override with --num-requests in BENCH FLAGS).
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1 concurrencies=${2:-1 8 32 64} bench_flags=${3:---input-len 256 --output-len 64} serve_flags=${4:-}
port=${PORT:-18131} build=${BUILD_DIR:-build}
log=$(mktemp) before=$(mktemp) after=$(mktemp)
# shellcheck disable=SC2086
SURGE_PHASE_PROFILE=1 "$build/surge" serve "$model" --host 127.0.0.1 --port "$port" $serve_flags >"$log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true; rm -f "$log" "$log.bench" "$before" "$after"' EXIT
for _ in $(seq 1 600); do
  if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 $server 2>/dev/null; then cat "$log"; exit 1; fi
  sleep 0.2
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %-11s | %13s | %13s | %10s | %13s |\n' concurrency "engine step s" "HTTP s" "HTTP share" "round wall s"
printf '|%s|%s|%s|%s|%s|\n' ------------- --------------- --------------- ------------ ---------------
for c in $concurrencies; do
  n=$((2 * c > 8 ? 2 * c : 8))
  curl -sf "http://127.0.0.1:$port/metrics" >"$before"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$build/surge" bench --url "http://127.0.0.1:$port" --concurrency "$c" --num-requests "$n" \
    $bench_flags >/dev/null 2>"$log.bench" || { cat "$log.bench"; exit 1; }
  end=$(date +%s.%N)
  curl -sf "http://127.0.0.1:$port/metrics" >"$after"
  /usr/bin/python3 - "$before" "$after" "$c" "$start" "$end" <<'PY'
import re, sys
def phases(path):
    out = {}
    for line in open(path):
        m = re.match(r'surge_phase_seconds_total\{phase="([a-z_]+)"\} (\S+)', line)
        if m: out[m.group(1)] = float(m.group(2))
    return out
a, b = phases(sys.argv[1]), phases(sys.argv[2])
d = {k: b[k] - a.get(k, 0) for k in b}
engine = sum(d[k] for k in ("forward", "batch_build", "scheduling", "sampling", "publish"))
http = sum(d[k] for k in ("http_io", "http_request", "http_stream"))
wall = float(sys.argv[5]) - float(sys.argv[4])
print(f"| {sys.argv[3]:>11} | {engine:13.3f} | {http:13.3f} | {100 * http / (engine + http):9.2f}% | {wall:13.2f} |")
PY
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
