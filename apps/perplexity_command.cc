// surge perplexity: llama-perplexity's figure for a model over a text file (apps/perplexity.h),
// in any weight format and KV cache dtype surge serves; running values on stderr, one JSON
// line on stdout.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "apps/commands.h"
#include "apps/perplexity.h"
#include "apps/serve_runtime.h"
#include "apps/weight_flags.h"
#include "base/flags.h"
#include "kernels/thread_pool.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

struct PerplexityFlags {
  std::string model;
  std::string tokenizer;
  std::string file;
  int64_t context = 512;
  int64_t batch_size = 2048;
  int64_t threads = 0;
  WeightFlags weights;
  std::string kv_cache_dtype = "f32";
  bool help = false;
};

void Register(FlagParser& parser, PerplexityFlags& f) {
  parser.AddString("model", &f.model, "Hugging Face model directory or .gguf file (required)");
  parser.AddString("tokenizer", &f.tokenizer, "Hugging Face tokenizer directory (default: the model's)");
  parser.AddString("file", &f.file, "the text to score, UTF-8 (required)");
  parser.AddInt("context", &f.context, "tokens per window; the second half of each is scored (default 512)");
  parser.AddInt("batch-size", &f.batch_size,
                "tokens per forward pass: batch-size / context windows at a time (default 2048)");
  parser.AddInt("threads", &f.threads, "worker threads (default: all cores)");
  RegisterWeightFlags(parser, f.weights);
  parser.AddString("kv-cache-dtype", &f.kv_cache_dtype, "KV cache format: f32 (default) | bf16 | f16 | int8 | int4");
  parser.AddBool("help", &f.help, "show this help");
}

constexpr const char* kUsage =
    "surge perplexity --model M --file TEXT [--context N] [flags]\n"
    "Perplexity as llama.cpp's llama-perplexity computes it: the text is tokenized whole (with BOS when the\n"
    "tokenizer adds one), cut into windows of N tokens (each starting with BOS when the tokenizer adds one),\n"
    "and the second half of each window is scored. Prints [window]running-PPL on stderr and one JSON line\n"
    "{ppl, stderr, tokens, scored_tokens, windows, seconds, ...} on stdout.\n";

int Fail(const Status& status, int code) {
  std::fprintf(stderr, "surge perplexity: %s\n", status.message().c_str());
  return code;
}

// A text is read whole and tokenized at once; beyond this it is refused rather than read.
constexpr std::uintmax_t kMaxTextBytes = std::uintmax_t{1} << 30;

StatusOr<std::string> ReadText(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return NotFoundError("cannot read --file " + path + ": " + error.message());
  if (size > kMaxTextBytes) {
    return InvalidArgumentError("--file " + path + " has " + std::to_string(size) + " bytes; at most 1 GiB is read");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read --file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json ResultJson(const PerplexityResult& r, size_t num_tokens, double seconds, const Model& model,
                          KvDType kv_dtype, bool bos) {
  return {{"ppl", r.nll.Perplexity()},
          {"stderr", r.nll.PerplexityError()},
          {"mean_nll", r.nll.MeanNll()},
          {"tokens", num_tokens},
          {"scored_tokens", r.nll.count()},
          {"windows", r.plan.num_windows},
          {"context", r.plan.context_tokens},
          {"windows_per_pass", r.windows_per_pass},
          {"bos", bos},
          {"weights", model.linear_weight_formats()},
          {"kv_cache_dtype", KvDTypeName(kv_dtype)},
          {"seconds", seconds}};
}

int Run(const PerplexityFlags& f) {
  auto load_options = ToLoadOptions(f.weights);
  if (!load_options.ok()) return Fail(load_options.status(), 2);
  auto kv_dtype = ParseKvDType(f.kv_cache_dtype);
  if (!kv_dtype.ok()) return Fail(InvalidArgumentError("--kv-cache-dtype: " + kv_dtype.status().message()), 2);
  auto text = ReadText(f.file);
  if (!text.ok()) return Fail(text.status(), text.status().code() == StatusCode::kInvalidArgument ? 2 : 1);
  auto tokenizer = LoadTokenizerFor(f.model, f.tokenizer);
  if (!tokenizer.ok()) return Fail(tokenizer.status(), 1);
  ThreadPool pool(static_cast<int>(f.threads > 0 ? f.threads : std::thread::hardware_concurrency()));
  auto model = Model::Load(f.model, &pool, *load_options);
  if (!model.ok()) return Fail(model.status(), 1);

  if (f.context > (*model)->config().max_position_embeddings) {  // llama-perplexity warns likewise
    std::fprintf(stderr, "surge perplexity: warning: --context %ld is past the model's %ld trained positions\n",
                 static_cast<long>(f.context), static_cast<long>((*model)->config().max_position_embeddings));
  }
  // llama-perplexity: BOS at the start of each window exactly when tokenizing adds it.
  const std::vector<int32_t> tokens = (*tokenizer)->Encode(*text, /*add_special_tokens=*/true);
  const int32_t bos = (*tokenizer)->bos_token_id();
  PerplexityOptions options;
  options.context_tokens = f.context;
  options.batch_tokens = f.batch_size;
  options.kv_dtype = *kv_dtype;
  if (bos >= 0 && !tokens.empty() && tokens[0] == bos) options.bos_token_id = bos;
  const auto start = std::chrono::steady_clock::now();
  auto result = EvaluatePerplexity(**model, tokens, options, [](int32_t window, const NllAccumulator& so_far) {
    std::fprintf(stderr, "[%d]%.4f,", window + 1, so_far.Perplexity());
    std::fflush(stderr);
  });
  if (!result.ok()) return Fail(result.status(), result.status().code() == StatusCode::kInvalidArgument ? 2 : 1);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "\nFinal estimate: PPL = %.4f +/- %.5f\n", result->nll.Perplexity(),
               result->nll.PerplexityError());
  const nlohmann::json out = ResultJson(*result, tokens.size(), seconds, **model, *kv_dtype, options.bos_token_id.has_value());
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace

int RunPerplexity(const std::vector<std::string>& args) {
  PerplexityFlags flags;
  FlagParser parser("perplexity");
  Register(parser, flags);
  if (Status status = parser.Parse(args); !status.ok()) return Fail(status, 2);
  if (flags.help) return std::printf("%s%s", kUsage, parser.Usage().c_str()), 0;
  if (flags.model.empty() || flags.file.empty()) {
    std::fprintf(stderr, "surge perplexity: --model and --file are required\n%s", kUsage);
    return 2;
  }
  return Run(flags);
}

}  // namespace surge
