// Embedding throughput through the engine: range(0) inputs of range(1) tokens submitted at
// once, pooled and L2-normalized; reports inputs/s and tokens/s. Batch 1 is one input's
// latency; batch 64 is what continuous batching makes of a full embeddings request.
// Model directory from SURGE_BENCH_MODEL (default: the bundled stories260K), its tokenizer
// from SURGE_BENCH_TOKENIZER (default: stories260K's); SURGE_BENCH_POOLING last | mean
// (default last); SURGE_BENCH_THREADS (default: all cores). E.g.
//   python3 tools/make_tiny_model.py --out /tmp/qwen3 --preset qwen3-tiny --config '{"vocab_size": 512}'
//   SURGE_BENCH_MODEL=/tmp/qwen3 build/embedding_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "kernels/thread_pool.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

std::string Env(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

struct Bench {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Engine> engine;
};

Bench& TheBench() {
  static Bench* bench = [] {
    auto* b = new Bench;
    b->pool = std::make_unique<ThreadPool>(std::stoi(
        Env("SURGE_BENCH_THREADS", std::to_string(std::thread::hardware_concurrency()).c_str())));
    auto model = Model::Load(Env("SURGE_BENCH_MODEL", "models/stories260K"), b->pool.get());
    CHECK(model.ok()) << model.status().ToString();
    b->model = std::move(model).value();
    auto tokenizer = Tokenizer::FromDirectory(Env("SURGE_BENCH_TOKENIZER", "models/stories260K"));
    CHECK(tokenizer.ok()) << tokenizer.status().ToString();
    b->tokenizer = std::move(tokenizer).value();
    EngineOptions options;  // the serve defaults: 2048 tokens per step, 256 sequences
    options.kv_cache_bytes = int64_t{256} << 20;
    auto engine = Engine::Create(*b->model, *b->tokenizer, options);
    CHECK(engine.ok()) << engine.status().ToString();
    b->engine = std::move(engine).value();
    b->engine->Start();
    return b;
  }();
  return *bench;
}

void BM_Embed(benchmark::State& state) {
  Bench& bench = TheBench();
  const int32_t num_inputs = static_cast<int32_t>(state.range(0));
  const int32_t num_tokens = static_cast<int32_t>(state.range(1));
  const int64_t vocab = std::min<int64_t>(bench.model->config().vocab_size, bench.tokenizer->vocab_size());
  const PoolingKind pooling = *ParsePoolingKind(Env("SURGE_BENCH_POOLING", "last"));
  std::vector<EngineRequest> requests(num_inputs);
  for (int32_t i = 0; i < num_inputs; ++i) {
    for (int32_t t = 0; t < num_tokens; ++t) {
      requests[i].prompt_ids.push_back(static_cast<int32_t>((i * 131 + t * 7919 + 3) % vocab));
    }
    requests[i].embed = pooling;
  }
  std::vector<std::shared_ptr<RequestStream>> streams(num_inputs);
  for (auto _ : state) {
    for (int32_t i = 0; i < num_inputs; ++i) streams[i] = *bench.engine->Submit(requests[i], nullptr);
    for (auto& stream : streams) {
      for (RequestOutput output = stream->Wait(); !output.finished; output = stream->Wait()) {
      }
    }
  }
  state.counters["inputs_per_s"] =
      benchmark::Counter(static_cast<double>(num_inputs) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(num_inputs) * num_tokens * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(PoolingKindName(pooling));
}
BENCHMARK(BM_Embed)
    ->ArgNames({"batch", "tokens"})
    ->Args({1, 128})
    ->Args({64, 128})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace surge
