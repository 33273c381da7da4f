#!/usr/bin/env bash
# A/B of the constraint benchmarks: this tree's build/constraint_bench against the same
# benchmark source built at an older revision, run interleaved (A B A B ...) so that a
# loaded machine slows both alike. Prints each run's CPU time per benchmark and the ratios.
#
#   scripts/constraint_bench_ab.sh REV [FILTER] [ROUNDS]
#     REV     the baseline revision (e.g. main, or a commit)
#     FILTER  --benchmark_filter regex (default: the recursive-GBNF and json_object masks)
#     ROUNDS  interleaved rounds (default 3)
#
# The baseline is exported with `git archive` into build-ab/REV-src (ignored by git), gets
# this tree's engine/constraint/constraint_bench.cc (it builds against either API), and is
# built with ccache into build-ab/REV-src/build. Needs scripts/setup.sh's tokenizers.
set -euo pipefail
rev=${1:?usage: constraint_bench_ab.sh REV [FILTER] [ROUNDS]}
filter=${2:-'BM_MaskGbnf|json_object_in_string/walk'}
rounds=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/build-ab/$(echo "$rev" | tr '/' '_')-src"
if [[ ! -x "$src/build/constraint_bench" ]]; then
  rm -rf "$src" && mkdir -p "$src"
  git -C "$root" archive "$rev" | tar -x -C "$src"
  cp "$root/engine/constraint/constraint_bench.cc" "$src/engine/constraint/"
  mkdir -p "$src/tests/node" && ln -sfn "$root/tests/node/node_modules" "$src/tests/node/node_modules"
  CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache \
    cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$src/build" -j2 --target constraint_bench >/dev/null
fi
cmake --build "$root/build" -j2 --target constraint_bench >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "loadavg before: $(cat /proc/loadavg)"
for ((i = 0; i < rounds; ++i)); do
  for side in A B; do
    bin="$src/build/constraint_bench"
    [[ $side == B ]] && bin="$root/build/constraint_bench"
    "$bin" --benchmark_filter="$filter" --benchmark_format=csv 2>/dev/null |
      awk -F, -v side=$side 'NR > 1 { gsub(/"/, "", $1); print side, $1, $4 }' >> "$out/runs"
  done
done
echo "loadavg after: $(cat /proc/loadavg)"
# Per benchmark: mean CPU time of A (baseline) and B (this tree), and B / A.
awk '{ sum[$2 " " $1] += $3; n[$2 " " $1]++; names[$2] = 1 }
     END { printf "%-55s %12s %12s %8s\n", "benchmark (cpu_time, its unit)", "A " "'"$rev"'", "B this tree", "B/A";
           for (b in names) { a = sum[b " A"] / n[b " A"]; c = sum[b " B"] / n[b " B"];
             printf "%-55s %12.4g %12.4g %8.2f\n", b, a, c, c / a } }' "$out/runs" | sort
