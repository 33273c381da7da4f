#!/usr/bin/env bash
# Seconds from starting a command (default: `make run`) to the README's first chat answer on
# 127.0.0.1:PORT; then stops what it started, by PID. Usage:
#   scripts/time_to_first_answer.sh [PORT] [-- COMMAND...]      (from the repository root)
# A fresh clone's figure includes setup and the build; a built tree's only the start.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${1:-8000}
shift || true
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || set -- make run
log=$(mktemp)
start=$(date +%s.%N)
setsid "$@" >"$log" 2>&1 &
pid=$!
trap 'kill -- -"$pid" 2>/dev/null || true; rm -f "$log"' EXIT
body='{"temperature": 0, "max_tokens": 64, "messages": [{"role": "user", "content": "What is the capital of Japan?"}]}'
deadline=$(( $(date +%s) + 7200 ))
while [ "$(date +%s)" -lt "$deadline" ]; do
  if ! kill -0 "$pid" 2>/dev/null; then echo "the command ended first:" >&2; tail -n 20 "$log" >&2; exit 1; fi
  if answer=$(curl -sf -m 60 "http://127.0.0.1:$PORT/v1/chat/completions" -H 'Content-Type: application/json' -d "$body"); then
    end=$(date +%s.%N)
    python3 -c "import json, sys; print(json.loads(sys.argv[1])['choices'][0]['message']['content'])" "$answer"
    python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s to the first chat answer')" "$start" "$end"
    exit 0
  fi
  sleep 0.2
done
echo "no answer within 2 hours" >&2
exit 1
