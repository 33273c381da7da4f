// surge generate: one prompt, one model, text out — one request through the same engine
// `surge serve` runs (its validation, scheduler, sampler and stop rules), its stream
// printed as it comes, with the timing of prefill and decode on stderr.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "apps/commands.h"
#include "apps/serve_runtime.h"
#include "apps/speculative_flags.h"
#include "apps/weight_flags.h"
#include "base/flags.h"
#include "base/logging.h"
#include "engine/engine.h"
#include "kernels/thread_pool.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

struct GenerateFlags {
  std::string model;  // "": kDefaultModelPath
  std::string prompt;
  std::string tokenizer;
  int64_t max_tokens = 128;
  double temperature = 0.0;
  double top_p = 1.0;
  int64_t top_k = -1;
  double min_p = 0.0;
  double repetition_penalty = 1.0;
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  int64_t seed = -1;
  int64_t threads = 0;
  WeightFlags weights;
  SpeculativeFlags speculative;
  std::string kv_cache_dtype = "auto";
  bool ignore_eos = false;
  bool json = false;
  bool help = false;
};

void Register(FlagParser& parser, GenerateFlags& f) {
  parser.AddString("model", &f.model, "Hugging Face model directory or .gguf file (default: SmolLM2-135M-Instruct, which "
                   "scripts/setup.sh installs; models/stories260K is the small one)");
  parser.AddString("tokenizer", &f.tokenizer, "Hugging Face tokenizer directory (default: the model's)");
  parser.AddString("prompt", &f.prompt, "prompt text (required)");
  parser.AddInt("max-tokens", &f.max_tokens, "most tokens to generate (default 128)");
  parser.AddDouble("temperature", &f.temperature, "0 = greedy (default), > 0 samples");
  parser.AddDouble("top-p", &f.top_p, "nucleus sampling mass (default 1)");
  parser.AddInt("top-k", &f.top_k, "keep the k most likely tokens (default -1: all)");
  parser.AddDouble("min-p", &f.min_p, "drop tokens below min_p * max prob (default 0)");
  parser.AddDouble("repetition-penalty", &f.repetition_penalty, "default 1 (off)");
  parser.AddDouble("presence-penalty", &f.presence_penalty, "default 0 (off)");
  parser.AddDouble("frequency-penalty", &f.frequency_penalty, "default 0 (off)");
  parser.AddInt("seed", &f.seed, "seed for sampling; same seed, same output (default random)");
  parser.AddInt("threads", &f.threads, "worker threads (default: all cores)");
  RegisterWeightFlags(parser, f.weights);
  RegisterSpeculativeFlags(parser, f.speculative);
  parser.AddString("kv-cache-dtype", &f.kv_cache_dtype,
                   "KV cache format: auto (= f16) | f32 | bf16 | f16 | int8 | int4 (default auto)");
  parser.AddBool("ignore-eos", &f.ignore_eos, "keep generating past end-of-sequence");
  parser.AddBool("json", &f.json, "print one JSON object with prompt/output ids and text");
  parser.AddBool("help", &f.help, "show this help");
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int Fail(const Status& status) {
  std::fprintf(stderr, "surge generate: %s\n", status.message().c_str());
  return 1;
}

EngineRequest ToRequest(const GenerateFlags& f, std::vector<int32_t> prompt_ids) {
  EngineRequest request;
  request.prompt_ids = std::move(prompt_ids);
  request.stop.max_tokens = static_cast<int32_t>(f.max_tokens);
  request.stop.ignore_eos = f.ignore_eos;
  SamplingParams& s = request.sampling;
  s.temperature = f.temperature;
  s.top_p = f.top_p;
  s.top_k = static_cast<int32_t>(f.top_k);
  s.min_p = f.min_p;
  s.repetition_penalty = f.repetition_penalty;
  s.presence_penalty = f.presence_penalty;
  s.frequency_penalty = f.frequency_penalty;
  if (f.seed >= 0) s.seed = static_cast<uint64_t>(f.seed);
  return request;
}

// Integer flags the request holds in 32 bits; beyond them a usage error, not a wrap.
Status CheckInt32Flags(const GenerateFlags& f) {
  for (auto [name, value] : {std::pair{"max-tokens", f.max_tokens}, std::pair{"top-k", f.top_k}}) {
    if (value < INT32_MIN || value > INT32_MAX) {
      return InvalidArgumentError(std::string("--") + name + " is out of range: " + std::to_string(value));
    }
  }
  return OkStatus();
}

// One request alone: a KV cache of just the blocks its prompt + max_tokens need (what
// the engine's own validation then checks), no prefix cache to fill.
EngineOptions ToEngineOptions(const ModelExecutor& model, KvDType kv_dtype, const EngineRequest& request) {
  EngineOptions options;
  options.kv_dtype = kv_dtype;
  options.max_num_seqs = 1;
  options.enable_prefix_caching = false;
  const int64_t num_positions =
      std::clamp<int64_t>(static_cast<int64_t>(request.prompt_ids.size()) + std::max(request.stop.max_tokens, 0),
                          1, std::max<int64_t>(model.config().max_position_embeddings, 1));
  const int64_t num_blocks = (num_positions + options.block_size - 1) / options.block_size;
  options.kv_cache_bytes =
      num_blocks * static_cast<int64_t>(model.kv_layout(options.block_size, kv_dtype).bytes_per_block());
  return options;
}

// The engine's start-up lines (KV cache size) are not this tool's output: stderr keeps
// the one summary line, or the one error. SURGE_LOG_LEVEL still decides when set.
StatusOr<std::unique_ptr<Engine>> CreateQuietly(ModelExecutor& model, const Tokenizer& tokenizer,
                                                const EngineOptions& options) {
  const LogLevel level = MinLogLevel();
  if (std::getenv("SURGE_LOG_LEVEL") == nullptr) SetMinLogLevel(std::max(level, LogLevel::kWarning));
  auto engine = Engine::Create(model, tokenizer, options);
  SetMinLogLevel(level);
  return engine;
}

struct Generated {
  std::vector<int32_t> output_ids;
  FinishReason finish_reason = FinishReason::kLength;
  double first_token_s = 0;  // since Submit
};

// Reads the stream to its end, printing each delta's text as it comes unless --json.
StatusOr<Generated> Drain(RequestStream& stream, bool print, std::chrono::steady_clock::time_point start) {
  Generated result;
  for (bool finished = false; !finished;) {
    RequestOutput output = stream.Wait();
    if (!output.error.ok()) return output.error;
    for (const ChoiceDelta& delta : output.choices) {
      if (!delta.token_ids.empty() && result.output_ids.empty()) result.first_token_s = SecondsSince(start);
      result.output_ids.insert(result.output_ids.end(), delta.token_ids.begin(), delta.token_ids.end());
      if (print) std::fputs(delta.text.c_str(), stdout), std::fflush(stdout);
      if (delta.finish_reason) result.finish_reason = *delta.finish_reason;
    }
    finished = output.finished;
  }
  return result;
}

// "" when not speculating, else ", speculative METHOD: A of P proposed tokens accepted".
std::string SpeculationSummary(const EngineStats& stats) {
  if (stats.spec_decode_method == "none") return "";
  return ", speculative " + stats.spec_decode_method + ": " + std::to_string(stats.spec_decode_num_accepted_tokens) +
         " of " + std::to_string(stats.spec_decode_num_draft_tokens) + " proposed tokens accepted";
}

int Run(GenerateFlags f, const SpeculativeConfig& speculative) {
  if (Status status = CheckInt32Flags(f); !status.ok()) return Fail(status) + 1;  // a usage error: 2
  StatusOr<std::string> model_path = ModelOrDefault(f.model);
  if (!model_path.ok()) return Fail(model_path.status());
  f.model = *model_path;
  auto tokenizer = LoadTokenizerFor(f.model, f.tokenizer);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  auto load_options = ToLoadOptions(f.weights);
  if (!load_options.ok()) return Fail(load_options.status()) + 1;
  auto kv_dtype = ParseKvDType(f.kv_cache_dtype);
  if (!kv_dtype.ok()) return Fail(kv_dtype.status()) + 1;
  int64_t threads = f.threads > 0 ? f.threads : std::thread::hardware_concurrency();
  ThreadPool pool(static_cast<int>(threads));
  AdjustTargetLoad(speculative, &*load_options);
  auto model = Model::Load(f.model, &pool, *load_options);
  if (!model.ok()) return Fail(model.status());

  std::vector<int32_t> prompt_ids = (*tokenizer)->Encode(f.prompt, /*add_special_tokens=*/true);
  EngineRequest request = ToRequest(f, prompt_ids);
  EngineOptions engine_options = ToEngineOptions(**model, *kv_dtype, request);
  auto speculation = StartSpeculation(speculative, f.model, *load_options, **model, &pool, &engine_options);
  if (!speculation.ok()) return Fail(speculation.status());
  auto engine = CreateQuietly(**model, **tokenizer, engine_options);
  if (!engine.ok()) return Fail(engine.status());
  (*engine)->Start();
  auto start = std::chrono::steady_clock::now();
  auto stream = (*engine)->Submit(std::move(request), nullptr);  // the engine's validation
  if (!stream.ok()) return Fail(stream.status());
  auto result = Drain(**stream, /*print=*/!f.json, start);
  const std::string speculation_summary = SpeculationSummary((*engine)->Stats());
  (*engine)->Stop();
  if (!result.ok()) return Fail(result.status());
  double total_s = SecondsSince(start);
  size_t num_out = result->output_ids.size();
  if (f.json) {
    nlohmann::json out = {{"prompt_token_ids", prompt_ids},
                          {"output_token_ids", result->output_ids},
                          {"text", (*tokenizer)->Decode(result->output_ids)}};
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("\n");
  }
  std::fprintf(stderr,
               "prompt %zu tokens, first token after %.1f ms; %zu tokens in %.1f ms "
               "(%.1f tok/s decode), finish: %s; weights %s, kv cache %s%s\n",
               prompt_ids.size(), result->first_token_s * 1e3, num_out, total_s * 1e3,
               num_out > 1 ? (num_out - 1) / (total_s - result->first_token_s) : 0.0,
               FinishReasonName(result->finish_reason),
               (*model)->linear_weight_formats().c_str(), KvDTypeName(*kv_dtype), speculation_summary.c_str());
  return 0;
}

}  // namespace

int RunGenerate(const std::vector<std::string>& args) {
  GenerateFlags flags;
  FlagParser parser("generate");
  Register(parser, flags);
  if (Status status = parser.Parse(args); !status.ok()) {
    std::fprintf(stderr, "surge generate: %s\n", status.message().c_str());
    return 2;
  }
  if (flags.help) return std::printf("%s", parser.Usage().c_str()), 0;
  if (!parser.seen("prompt")) {
    std::fprintf(stderr, "surge generate: --prompt is required (see `surge generate --help`)\n");
    return 2;
  }
  StatusOr<SpeculativeConfig> speculative = ToSpeculativeConfig(flags.speculative, parser);
  if (!speculative.ok()) {
    std::fprintf(stderr, "surge generate: %s\n", speculative.status().message().c_str());
    return 2;
  }
  return Run(flags, *speculative);
}

}  // namespace surge
