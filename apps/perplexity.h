// Perplexity as llama.cpp's llama-perplexity measures it: the text's tokens cut into
// windows of n_ctx tokens, each window run from scratch (its first token replaced by BOS
// when the tokenizer adds one), and only the second half of each window scored, so every
// scored token sees at least n_ctx / 2 tokens of context. `surge perplexity` runs it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "base/status.h"
#include "kernels/kv_codec.h"
#include "model/executor.h"

namespace surge {

// Which tokens of which windows are scored (llama-perplexity's perplexity()).
struct PerplexityPlan {
  int32_t context_tokens = 0;  // n_ctx: tokens per window
  int32_t num_windows = 0;     // floor(num_tokens / n_ctx); window w is [w * n_ctx, (w + 1) * n_ctx)
  // The logits of window positions [first_scored, n_ctx - 1) are scored, each against
  // the next token: n_ctx - 1 - n_ctx / 2 tokens per window.
  int32_t first_scored = 0;  // n_ctx / 2
  int32_t scored_per_window() const { return context_tokens - 1 - first_scored; }
};

// INVALID_ARGUMENT (naming --context) for n_ctx < 4, and when the text has fewer than
// 2 * n_ctx tokens (llama-perplexity's own minimum).
StatusOr<PerplexityPlan> PlanPerplexity(int64_t num_tokens, int64_t context_tokens);

// -log softmax(logits)[target]: the max subtracted, exp summed in double (llama.cpp's
// log_softmax).
double TokenNll(std::span<const float> logits, int32_t target);

// Sums of NLL and NLL^2 over scored tokens; the figures llama-perplexity prints.
class NllAccumulator {
 public:
  void Add(double nll) { sum_ += nll, sum_squares_ += nll * nll, ++count_; }
  int64_t count() const { return count_; }
  double MeanNll() const { return count_ ? sum_ / count_ : 0.0; }
  double Perplexity() const;  // exp(mean NLL)
  // "PPL = X +/- E": E = PPL * sqrt((mean(NLL^2) - mean(NLL)^2) / (count - 1)), the
  // standard error of the mean NLL carried to PPL to first order; 0 while undefined.
  double PerplexityError() const;

 private:
  double sum_ = 0;
  double sum_squares_ = 0;
  int64_t count_ = 0;
};

struct PerplexityOptions {
  int64_t context_tokens = 512;
  int64_t batch_tokens = 2048;  // windows per forward pass: max(1, batch_tokens / n_ctx)
  int32_t block_size = 16;      // the paged KV cache's, as the engine's default
  KvDType kv_dtype = KvDType::kF32;
  std::optional<int32_t> bos_token_id;  // replaces each window's first token when set
};

struct PerplexityResult {
  PerplexityPlan plan;
  NllAccumulator nll;
  int32_t windows_per_pass = 0;
};

// Called after each window, in order, with the window's index and the running sums.
using PerplexityProgress = std::function<void(int32_t window, const NllAccumulator& so_far)>;

// Runs every window through `model` (several windows per pass, each a sequence of the
// batch writing and reading its K/V through its block table in a paged KV cache of
// options.kv_dtype, as serving does) and scores them. Errors as PlanPerplexity.
StatusOr<PerplexityResult> EvaluatePerplexity(ModelExecutor& model, std::span<const int32_t> tokens,
                                         const PerplexityOptions& options,
                                         const PerplexityProgress& progress = {});

}  // namespace surge
