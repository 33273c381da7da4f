// MatMul throughput at decode (M = 1) and prefill (M = 128) shapes of a 110M Llama.
// Args: M, N (out features), K (in features), SimdLevel; all cores through one pool.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/matmul.h"

namespace surge {
namespace {

ThreadPool& Pool() {
  static ThreadPool* pool = new ThreadPool();
  return *pool;
}

void BM_MatMul(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const SimdLevel level = static_cast<SimdLevel>(state.range(3));
  if (level > DetectedSimdLevel()) return state.SkipWithError("CPU lacks this SIMD level");
  std::mt19937 rng(0);
  std::normal_distribution<float> dist;
  std::vector<float> x(m * k), w(n * k), y(m * n);
  for (float& v : x) v = dist(rng);
  for (float& v : w) v = dist(rng);
  WeightMatrix weight = F32Weight(w.data(), n, k);
  for (auto _ : state) {
    MatMulWithLevel(level, x.data(), m, weight, nullptr, y.data(), &Pool());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP"] =
      benchmark::Counter(2.0 * m * n * k * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.counters["threads"] = Pool().num_threads();
  state.SetLabel(SimdLevelName(level));
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int level : {0, 1, 2})
    for (int64_t m : {1, 128})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{768, 768}, {2048, 768}})
        b->Args({m, n, k, level});
}

BENCHMARK(BM_MatMul)->Apply(Shapes)->UseRealTime();

}  // namespace
}  // namespace surge
