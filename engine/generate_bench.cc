// Single-request generation speed: prefill tokens/s and greedy decode tokens/s.
// Model directory from SURGE_BENCH_MODEL (default: the bundled stories260K), e.g. a
// 110M Llama from `tools/make_tiny_model.py --preset llama-110m --out /tmp/llama110m`.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <numeric>
#include <thread>

#include "engine/generator.h"
#include "kernels/thread_pool.h"

namespace surge {
namespace {

Model& BenchModel() {
  static ThreadPool* pool = new ThreadPool(static_cast<int>(std::thread::hardware_concurrency()));
  static Model* model = [] {
    const char* dir = std::getenv("SURGE_BENCH_MODEL");
    auto loaded = Model::Load(dir ? dir : "models/stories260K", pool);
    CHECK(loaded.ok()) << loaded.status().ToString();
    return loaded->release();
  }();
  return *model;
}

std::vector<int32_t> Prompt(int32_t num_tokens, int64_t vocab_size) {
  std::vector<int32_t> ids(num_tokens);
  for (int32_t i = 0; i < num_tokens; ++i) ids[i] = static_cast<int32_t>((i * 7919 + 3) % vocab_size);
  return ids;
}

// Decode: a 16-token prompt, then range(0) greedy tokens; reports decode tokens/s.
void BM_GreedyDecode(benchmark::State& state) {
  Model& model = BenchModel();
  std::vector<int32_t> prompt = Prompt(16, model.config().vocab_size);
  GenerateOptions options;
  options.max_tokens = static_cast<int32_t>(state.range(0));
  options.sampling.temperature = 0;
  options.ignore_eos = true;
  Generator generator(model);
  for (auto _ : state) {
    auto result = generator.Generate(prompt, options);
    CHECK(result.ok()) << result.status().ToString();
  }
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(options.max_tokens) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GreedyDecode)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

// Prefill: range(0) prompt tokens in one forward pass, one output token.
void BM_Prefill(benchmark::State& state) {
  Model& model = BenchModel();
  std::vector<int32_t> prompt = Prompt(static_cast<int32_t>(state.range(0)), model.config().vocab_size);
  GenerateOptions options;
  options.max_tokens = 1;
  options.sampling.temperature = 0;
  Generator generator(model);
  for (auto _ : state) {
    auto result = generator.Generate(prompt, options);
    CHECK(result.ok()) << result.status().ToString();
  }
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(prompt.size()) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Prefill)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace surge
