// surge generate: one prompt, one model, text out — the offline path through tokenizer,
// model and sampler, with the timing of prefill and decode on stderr.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "apps/commands.h"
#include "apps/weight_flags.h"
#include "base/flags.h"
#include "engine/generator.h"
#include "kernels/thread_pool.h"
#include "model/model.h"
#include "apps/serve_runtime.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

struct GenerateFlags {
  std::string model = "models/stories260K";
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
  std::string kv_cache_dtype = "auto";
  bool ignore_eos = false;
  bool json = false;
  bool help = false;
};

void Register(FlagParser& parser, GenerateFlags& f) {
  parser.AddString("model", &f.model, "Hugging Face model directory or .gguf file (default models/stories260K)");
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
  parser.AddString("kv-cache-dtype", &f.kv_cache_dtype,
                   "KV cache format: auto (= f32) | f32 | bf16 | f16 | int8 | int4 (default auto)");
  parser.AddBool("ignore-eos", &f.ignore_eos, "keep generating past end-of-sequence");
  parser.AddBool("json", &f.json, "print one JSON object with prompt/output ids and text");
  parser.AddBool("help", &f.help, "show this help");
}

GenerateOptions ToOptions(const GenerateFlags& f) {
  GenerateOptions options;
  options.max_tokens = static_cast<int32_t>(f.max_tokens);
  options.ignore_eos = f.ignore_eos;
  SamplingParams& s = options.sampling;
  s.temperature = f.temperature;
  s.top_p = f.top_p;
  s.top_k = static_cast<int32_t>(f.top_k);
  s.min_p = f.min_p;
  s.repetition_penalty = f.repetition_penalty;
  s.presence_penalty = f.presence_penalty;
  s.frequency_penalty = f.frequency_penalty;
  if (f.seed >= 0) s.seed = static_cast<uint64_t>(f.seed);
  return options;
}

std::vector<int32_t> StopIds(const Tokenizer& tokenizer, const ModelConfig& config) {
  std::vector<int32_t> ids = tokenizer.eos_token_ids();
  for (int32_t id : config.eos_token_ids) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int Fail(const Status& status) {
  std::fprintf(stderr, "surge generate: %s\n", status.message().c_str());
  return 1;
}

int Run(const GenerateFlags& f) {
  auto tokenizer = LoadTokenizerFor(f.model, f.tokenizer);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  auto load_options = ToLoadOptions(f.weights);
  if (!load_options.ok()) return Fail(load_options.status()) + 1;  // a usage error: 2
  auto kv_dtype = ParseKvDType(f.kv_cache_dtype);
  if (!kv_dtype.ok()) return Fail(kv_dtype.status()) + 1;
  int64_t threads = f.threads > 0 ? f.threads : std::thread::hardware_concurrency();
  ThreadPool pool(static_cast<int>(threads));
  auto model = Model::Load(f.model, &pool, *load_options);
  if (!model.ok()) return Fail(model.status());

  std::vector<int32_t> prompt_ids = (*tokenizer)->Encode(f.prompt, /*add_special_tokens=*/true);
  GenerateOptions options = ToOptions(f);
  options.stop_token_ids = StopIds(**tokenizer, (*model)->config());
  IncrementalDecoder decoder(**tokenizer);
  auto start = std::chrono::steady_clock::now();
  double first_token_s = 0;
  Generator generator(**model, /*block_size=*/16, *kv_dtype);
  auto result = generator.Generate(prompt_ids, options, [&](int32_t token, std::span<const float>) {
    if (first_token_s == 0) first_token_s = SecondsSince(start);
    if (!f.json) std::fputs(decoder.Add(token).c_str(), stdout), std::fflush(stdout);
    return true;
  });
  if (!result.ok()) return Fail(result.status());
  double total_s = SecondsSince(start);
  size_t num_out = result->output_ids.size();
  if (f.json) {
    nlohmann::json out = {{"prompt_token_ids", prompt_ids},
                          {"output_token_ids", result->output_ids},
                          {"text", (*tokenizer)->Decode(result->output_ids)}};
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s\n", decoder.Flush().c_str());
  }
  std::fprintf(stderr,
               "prompt %zu tokens, first token after %.1f ms; %zu tokens in %.1f ms "
               "(%.1f tok/s decode), finish: %s; weights %s, kv cache %s\n",
               prompt_ids.size(), first_token_s * 1e3, num_out, total_s * 1e3,
               num_out > 1 ? (num_out - 1) / (total_s - first_token_s) : 0.0,
               FinishReasonName(result->finish_reason),
               (*model)->linear_weight_formats().c_str(), KvDTypeName(*kv_dtype));
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
  return Run(flags);
}

}  // namespace surge
