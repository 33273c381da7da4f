// Single-request generation speed through the engine (one request at a time, as `surge
// generate` runs it): prefill tokens/s and greedy decode tokens/s; and one batched decode
// step on the executor itself.
// Model directory from SURGE_BENCH_MODEL (default: the bundled stories260K), e.g. a
// 110M Llama from `tools/make_tiny_model.py --preset llama-110m --out /tmp/llama110m`.
// Weight format from SURGE_BENCH_DTYPE (f32 | bf16) and SURGE_BENCH_QUANTIZE
// (none | int8 | int4, with SURGE_BENCH_GROUP_SIZE, default 32), so that decode
// ms/token can be compared per format:
//   SURGE_BENCH_MODEL=/tmp/llama110m SURGE_BENCH_QUANTIZE=int4 build-kern/generate_bench
// SURGE_BENCH_MODEL may be a .gguf file (each tensor keeps its file's format; Q8_0/Q6_K
// become SURGE_BENCH_GGUF_WIDE: int8 (default) | bf16 | f32):
//   SURGE_BENCH_MODEL=/tmp/llama110m.q4_0.gguf build/generate_bench
// BM_SpeculativeGreedyDecode runs the same decode with speculative decoding, the target's
// own weights quantized as the draft (SURGE_BENCH_DRAFT_QUANTIZE: int8 (default) | int4;
// K = SURGE_BENCH_SPEC_TOKENS, default 4) -- or, with SURGE_BENCH_SPECULATIVE=mtp, a
// DeepSeek-V3 model's own MTP layer --, beside BM_GreedyDecode in the same run; it
// CHECKs that its greedy tokens are the plain engine's and reports the acceptance rate.
// SURGE_BENCH_THREADS sets the thread pool's size (default: all cores), e.g. to match
// llama.cpp's -t in scripts/bench_vs_llamacpp.sh. SURGE_BENCH_TOKENIZER (default:
// stories260K's) only feeds the engine's detokenizer: ids beyond its vocabulary decode to
// nothing, so any model runs with it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <vector>
#include <numeric>
#include <string>
#include <thread>

#include "base/check.h"
#include "engine/engine.h"
#include "engine/spec_decode/draft_proposer.h"
#include "engine/spec_decode/mtp_proposer.h"
#include "kernels/thread_pool.h"
#include "kv/kv_storage.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

std::string Env(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// SURGE_BENCH_SPECULATIVE: draft (default) | mtp.
std::string SpeculativeMethodEnv() {
  const std::string method = Env("SURGE_BENCH_SPECULATIVE", "draft");
  CHECK(method == "draft" || method == "mtp") << "SURGE_BENCH_SPECULATIVE=" << method;
  return method;
}

LoadOptions BenchLoadOptions() {
  LoadOptions options;
  const std::string dtype = Env("SURGE_BENCH_DTYPE", "f32");
  const std::string quantize = Env("SURGE_BENCH_QUANTIZE", "none");
  CHECK(dtype == "f32" || dtype == "bf16") << "SURGE_BENCH_DTYPE=" << dtype;
  CHECK(quantize == "none" || quantize == "int8" || quantize == "int4")
      << "SURGE_BENCH_QUANTIZE=" << quantize;
  options.dtype = dtype == "bf16" ? WeightDType::kBF16 : WeightDType::kF32;
  options.quantize = quantize == "int8"   ? Quantization::kInt8
                     : quantize == "int4" ? Quantization::kInt4
                                          : Quantization::kNone;
  options.group_size = std::stoi(Env("SURGE_BENCH_GROUP_SIZE", "32"));
  const std::string wide = Env("SURGE_BENCH_GGUF_WIDE", "int8");
  CHECK(wide == "int8" || wide == "bf16" || wide == "f32") << "SURGE_BENCH_GGUF_WIDE=" << wide;
  options.gguf_wide_quant_dtype = wide == "int8"   ? WeightDType::kInt8
                                  : wide == "bf16" ? WeightDType::kBF16
                                                   : WeightDType::kF32;
  const std::string mla = Env("SURGE_BENCH_MLA", "absorbed");
  CHECK(mla == "absorbed" || mla == "expanded") << "SURGE_BENCH_MLA=" << mla;
  if (mla == "expanded") options.mla_mode = LoadOptions::MlaMode::kExpanded;
  options.load_mtp = SpeculativeMethodEnv() == "mtp";
  return options;
}

// One pool for every model of the run: the target and its draft take turns on it, as in
// surge serve (a second pool's workers would spin beside the first's).
ThreadPool& BenchPool() {
  static ThreadPool* pool = new ThreadPool(std::stoi(
      Env("SURGE_BENCH_THREADS", std::to_string(std::thread::hardware_concurrency()).c_str())));
  return *pool;
}

Model& BenchModel() {
  static Model* model = [] {
    auto loaded =
        Model::Load(Env("SURGE_BENCH_MODEL", "models/stories260K"), &BenchPool(), BenchLoadOptions());
    CHECK(loaded.ok()) << loaded.status().ToString();
    return loaded->release();
  }();
  return *model;
}

const Tokenizer& BenchTokenizer() {
  static Tokenizer* tokenizer = [] {
    auto loaded = Tokenizer::FromDirectory(Env("SURGE_BENCH_TOKENIZER", "models/stories260K"));
    CHECK(loaded.ok()) << loaded.status().ToString();
    return loaded->release();
  }();
  return *tokenizer;
}

// No prefix cache (every run computes its whole prompt), KV for the longest prompt plus
// its outputs, in SURGE_BENCH_KV_DTYPE (default f32; surge serve's auto is f16, as is
// llama.cpp's default cache).
EngineOptions BenchEngineOptions(const Model& model) {
  EngineOptions options;
  options.enable_prefix_caching = false;
  auto kv_dtype = ParseKvDType(Env("SURGE_BENCH_KV_DTYPE", "f32"));
  CHECK(kv_dtype.ok()) << "SURGE_BENCH_KV_DTYPE: " << kv_dtype.status().ToString();
  options.kv_dtype = *kv_dtype;
  // Room for BM_Prefill's longest prompt where the model takes it (16,384 tokens + 1).
  const int64_t max_tokens = std::min<int64_t>(model.config().max_position_embeddings, 16400);
  const int64_t num_blocks = std::max<int64_t>(64, (max_tokens + options.block_size - 1) / options.block_size);
  options.kv_cache_bytes =
      num_blocks * static_cast<int64_t>(model.kv_layout(options.block_size, options.kv_dtype).bytes_per_block());
  return options;
}

Engine* StartEngine(Model& model, const EngineOptions& options) {
  auto created = Engine::Create(model, BenchTokenizer(), options);
  CHECK(created.ok()) << created.status().ToString();
  (*created)->Start();
  return created->release();
}

// One engine over BenchModel() for the single-request benchmarks.
Engine& BenchEngine() {
  static Engine* engine = StartEngine(BenchModel(), BenchEngineOptions(BenchModel()));
  return *engine;
}

// The same, speculating with the target's own weights quantized as the draft, or with its
// MTP layer.
Engine& SpeculativeBenchEngine() {
  static Engine* engine = [] {
    Model& model = BenchModel();
    if (SpeculativeMethodEnv() == "mtp") {
      EngineOptions options = BenchEngineOptions(model);
      options.num_speculative_tokens = std::stoi(Env("SURGE_BENCH_SPEC_TOKENS", "4"));
      auto proposer = MtpProposer::Create(model, options.block_size, 64 + kMaxSpeculativeTokens);
      CHECK(proposer.ok()) << proposer.status().ToString();
      options.proposer = std::move(*proposer);
      return StartEngine(model, options);
    }
    LoadOptions draft_options = BenchLoadOptions();
    const std::string quantize = Env("SURGE_BENCH_DRAFT_QUANTIZE", "int8");
    CHECK(quantize == "int4" || quantize == "int8") << "SURGE_BENCH_DRAFT_QUANTIZE=" << quantize;
    draft_options.quantize = quantize == "int8" ? Quantization::kInt8 : Quantization::kInt4;
    auto draft = Model::Load(Env("SURGE_BENCH_MODEL", "models/stories260K"), &BenchPool(), draft_options);
    CHECK(draft.ok()) << draft.status().ToString();
    static Model* draft_model = draft->release();
    EngineOptions options = BenchEngineOptions(model);
    options.num_speculative_tokens = std::stoi(Env("SURGE_BENCH_SPEC_TOKENS", "4"));
    auto proposer = DraftModelProposer::Create(*draft_model, model.config().vocab_size, options.block_size, 64);
    CHECK(proposer.ok()) << proposer.status().ToString();
    options.proposer = std::move(*proposer);
    return StartEngine(model, options);
  }();
  return *engine;
}

// Submits `request` and waits for its end; returns the tokens it generated.
std::vector<int32_t> RunToEndIds(Engine& engine, EngineRequest request) {
  auto stream = engine.Submit(std::move(request), nullptr);
  CHECK(stream.ok()) << stream.status().ToString();
  std::vector<int32_t> ids;
  for (bool finished = false; !finished;) {
    RequestOutput output = (*stream)->Wait();
    CHECK(output.error.ok()) << output.error.ToString();
    for (const ChoiceDelta& delta : output.choices) ids.insert(ids.end(), delta.token_ids.begin(), delta.token_ids.end());
    finished = output.finished;
  }
  return ids;
}

int64_t RunToEnd(Engine& engine, EngineRequest request) {
  return static_cast<int64_t>(RunToEndIds(engine, std::move(request)).size());
}

EngineRequest GreedyRequest(std::vector<int32_t> prompt, int32_t max_tokens) {
  EngineRequest request;
  request.prompt_ids = std::move(prompt);
  request.sampling.temperature = 0;
  request.stop.max_tokens = max_tokens;
  request.stop.ignore_eos = true;
  return request;
}

// Labels a run with the weight format and the bytes one decode step streams.
void Describe(benchmark::State& state, const Model& model, const std::string& suffix = "") {
  const std::string path = Env("SURGE_BENCH_MODEL", "");
  state.SetLabel((path.ends_with(".gguf") ? path.substr(path.find_last_of('/') + 1)
                                          : LoadOptionsName(model.load_options())) + suffix);
  state.counters["weight_MB"] = model.linear_weight_bytes() / 1e6;
}

std::vector<int32_t> Prompt(int32_t num_tokens, int64_t vocab_size) {
  std::vector<int32_t> ids(num_tokens);
  for (int32_t i = 0; i < num_tokens; ++i)
    ids[i] = static_cast<int32_t>((i * 7919 + 3) % vocab_size);
  return ids;
}

// Decode: a 16-token prompt, then range(0) greedy tokens; reports decode tokens/s.
void BM_GreedyDecode(benchmark::State& state) {
  Model& model = BenchModel();
  Engine& engine = BenchEngine();
  const std::vector<int32_t> prompt = Prompt(16, model.config().vocab_size);
  const int32_t max_tokens = static_cast<int32_t>(state.range(0));
  for (auto _ : state) CHECK_EQ(RunToEnd(engine, GreedyRequest(prompt, max_tokens)), max_tokens);
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(max_tokens) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["s_per_token"] =
      benchmark::Counter(static_cast<double>(max_tokens) * state.iterations(),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  Describe(state, model);
}
BENCHMARK(BM_GreedyDecode)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

// BM_GreedyDecode with speculation (see the top): the same tokens, fewer target passes.
void BM_SpeculativeGreedyDecode(benchmark::State& state) {
  Model& model = BenchModel();
  Engine& engine = SpeculativeBenchEngine();
  const std::vector<int32_t> prompt = Prompt(16, model.config().vocab_size);
  const int32_t max_tokens = static_cast<int32_t>(state.range(0));
  const std::vector<int32_t> expected = RunToEndIds(BenchEngine(), GreedyRequest(prompt, max_tokens));
  const EngineStats before = engine.Stats();
  for (auto _ : state) CHECK(RunToEndIds(engine, GreedyRequest(prompt, max_tokens)) == expected) << "greedy output changed";
  const EngineStats after = engine.Stats();
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(max_tokens) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["s_per_token"] =
      benchmark::Counter(static_cast<double>(max_tokens) * state.iterations(),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  const double proposed = static_cast<double>(after.spec_decode_num_draft_tokens - before.spec_decode_num_draft_tokens);
  const double accepted =
      static_cast<double>(after.spec_decode_num_accepted_tokens - before.spec_decode_num_accepted_tokens);
  state.counters["acceptance"] = proposed > 0 ? accepted / proposed : 0;
  state.counters["target_passes_per_token"] =
      static_cast<double>(after.num_steps - before.num_steps) / (static_cast<double>(max_tokens) * state.iterations());
  Describe(state, model,
           SpeculativeMethodEnv() == "mtp" ? std::string(" mtp") : " draft " + Env("SURGE_BENCH_DRAFT_QUANTIZE", "int8"));
}
BENCHMARK(BM_SpeculativeGreedyDecode)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

// Prefill: range(0) prompt tokens in one forward pass (within the engine's 2048-token
// step budget), one output token.
void BM_Prefill(benchmark::State& state) {
  Model& model = BenchModel();
  Engine& engine = BenchEngine();
  const std::vector<int32_t> prompt =
      Prompt(static_cast<int32_t>(state.range(0)), model.config().vocab_size);
  if (static_cast<int64_t>(prompt.size()) + 1 > model.config().max_position_embeddings) {
    state.SkipWithError("the prompt and one token exceed the model's context");
    return;
  }
  for (auto _ : state) RunToEnd(engine, GreedyRequest(prompt, 1));
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(prompt.size()) * state.iterations(), benchmark::Counter::kIsRate);
  Describe(state, model);
}
// 4,096 and 16,384: long-context TTFT (a model with max_position_embeddings past them, e.g.
// make_tiny_model.py --max-position-embeddings 32768; others skip), in 2,048-token steps.
BENCHMARK(BM_Prefill)->Arg(128)->Arg(512)->Arg(4096)->Arg(16384)->Unit(benchmark::kMillisecond)->UseRealTime();

// One decode step of range(0) sequences, each with range(1) tokens already in the KV
// cache: what a continuous-batching engine runs per step once every sequence decodes.
// Reports the step time and tokens/s (= sequences / step time). On the executor itself,
// while the engine is idle (one user of the model's activations at a time). Where the
// step's time goes, phase by phase: build/decode_profile (docs/DECODE_PROFILE.md).
void BM_DecodeStep(benchmark::State& state) {
  Model& model = BenchModel();
  const int32_t num_seqs = static_cast<int32_t>(state.range(0));
  const int32_t context = static_cast<int32_t>(state.range(1));
  const int32_t block_size = 16, blocks_per_seq = context / block_size + 1;
  KvStorage kv(model.kv_layout(block_size), num_seqs * blocks_per_seq);
  std::vector<std::vector<BlockId>> tables(num_seqs);
  const int64_t vocab = model.config().vocab_size;
  for (int32_t s = 0; s < num_seqs; ++s) {  // prefill each sequence's context
    for (int32_t b = 0; b < blocks_per_seq; ++b) tables[s].push_back(s * blocks_per_seq + b);
    const std::vector<int32_t> prompt = Prompt(context, vocab);
    const SequenceChunk chunk{0, context, 0, tables[s]};
    const int32_t last = context - 1;
    std::vector<float> logits(vocab);
    model.Run({prompt, {&chunk, 1}, {&last, 1}}, kv, logits);
  }
  std::vector<int32_t> tokens(num_seqs), rows(num_seqs);
  std::vector<SequenceChunk> chunks(num_seqs);
  for (int32_t s = 0; s < num_seqs; ++s) {
    tokens[s] = (s * 31 + 7) % static_cast<int32_t>(vocab);
    rows[s] = s;
    chunks[s] = {s, 1, context, tables[s]};  // rewrites position `context` each step
  }
  std::vector<float> logits(num_seqs * vocab);
  for (auto _ : state) model.Run({tokens, chunks, rows}, kv, logits);
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(num_seqs) * state.iterations(), benchmark::Counter::kIsRate);
  Describe(state, model);
}
BENCHMARK(BM_DecodeStep)
    ->ArgNames({"seqs", "context"})
    ->Args({1, 256})
    ->Args({8, 256})
    ->Args({32, 256})
    ->Args({64, 256})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace surge
