// Engine step time at batch 32, with every request free or every request under a
// 10-property JSON schema (masks, mask cache lookups, matcher advances): the cost
// constrained decoding adds to a step. The model is the bundled stories260K, or
// SURGE_BENCH_MODEL (the issue's target: the 110M preset of tools/make_tiny_model.py).
//   build/structured_output_bench --benchmark_filter=EngineStep
//   SURGE_BENCH_MODEL=/tmp/llama110m build/structured_output_bench --benchmark_filter=EngineStep
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine/constraint/constraint.h"
#include "engine/engine.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

constexpr int32_t kBatch = 32;
constexpr int32_t kMaxTokens = 64;  // every schema output is longer: the batch stays at 32

constexpr char kTenProperties[] = R"({"type": "object", "properties": {
  "name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 150},
  "height": {"type": "number", "minimum": 0}, "member": {"type": "boolean"},
  "color": {"enum": ["red", "green", "blue"]}, "city": {"type": "string", "maxLength": 16},
  "born": {"type": "string", "format": "date"}, "tags": {"type": "array", "items": {"type": "string",
  "maxLength": 6}, "maxItems": 4}, "score": {"type": "integer"}, "note": {"type": "string", "maxLength": 20}},
  "required": ["name", "age", "height", "member", "color", "city", "born", "tags", "score", "note"]})";

struct Setup {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Engine> engine;
  std::shared_ptr<const CompiledGrammar> schema;
};

Setup& GetSetup() {
  static Setup* setup = [] {
    auto* s = new Setup;
    const char* env = std::getenv("SURGE_BENCH_MODEL");
    const std::string dir = env != nullptr && *env != '\0' ? env : "models/stories260K";
    s->model = std::move(Model::Load(dir, nullptr)).value();
    s->tokenizer = std::move(Tokenizer::FromDirectory(dir)).value();
    s->engine = std::move(Engine::Create(*s->model, *s->tokenizer, EngineOptions())).value();
    s->engine->Start();
    ConstraintSpec spec{ConstraintKind::kJsonSchema, kTenProperties, {}};
    s->schema = std::move(CompileConstraint(spec, ConstraintLimits())).value();
    return s;
  }();
  return *setup;
}

// range(0): 0 free, 1 every request under the schema. One iteration = 32 requests of 64
// sampled tokens, run together to the end.
void BM_EngineStep(benchmark::State& state) {
  Setup& setup = GetSetup();
  const bool constrained = state.range(0) != 0;
  int64_t num_steps = 0;
  uint64_t seed = 0;
  double seconds = 0;
  for (auto _ : state) {
    const int64_t steps_before = setup.engine->Stats().num_steps;
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (int32_t i = 0; i < kBatch; ++i) {
      EngineRequest request;
      request.prompt_ids = {1, 403, 407, static_cast<int32_t>(3 + i)};
      request.sampling.seed = ++seed;
      request.stop.max_tokens = kMaxTokens;
      request.stop.ignore_eos = true;
      if (constrained) request.constraint = setup.schema;
      streams.push_back(std::move(setup.engine->Submit(std::move(request), nullptr)).value());
    }
    for (auto& stream : streams) {
      while (!stream->Wait().finished) {
      }
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    num_steps += setup.engine->Stats().num_steps - steps_before;
  }
  state.counters["steps"] = static_cast<double>(num_steps) / state.iterations();
  state.counters["ms_per_step"] = 1e3 * seconds / static_cast<double>(num_steps);
  state.SetLabel(constrained ? "10-property json_schema" : "free");
}
BENCHMARK(BM_EngineStep)->ArgName("constrained")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace surge
