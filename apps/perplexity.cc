#include "apps/perplexity.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "base/check.h"

namespace surge {

StatusOr<PerplexityPlan> PlanPerplexity(int64_t num_tokens, int64_t context_tokens) {
  if (context_tokens < 4 || context_tokens > (1 << 20)) {
    return InvalidArgumentError("--context must be in [4, 1048576], got " + std::to_string(context_tokens));
  }
  if (num_tokens < 2 * context_tokens) {
    return InvalidArgumentError("the text has " + std::to_string(num_tokens) + " tokens; --context " +
                                std::to_string(context_tokens) + " needs at least 2 * context = " +
                                std::to_string(2 * context_tokens));
  }
  PerplexityPlan plan;
  plan.context_tokens = static_cast<int32_t>(context_tokens);
  plan.num_windows = static_cast<int32_t>(num_tokens / context_tokens);
  plan.first_scored = plan.context_tokens / 2;
  return plan;
}

double TokenNll(std::span<const float> logits, int32_t target) {
  CHECK(target >= 0 && static_cast<size_t>(target) < logits.size()) << "target " << target;
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  double sum_exp = 0.0;
  for (float logit : logits) sum_exp += std::exp(logit - max_logit);
  return -(static_cast<double>(logits[target] - max_logit) - std::log(sum_exp));
}

double NllAccumulator::Perplexity() const { return std::exp(MeanNll()); }

double NllAccumulator::PerplexityError() const {
  if (count_ < 2) return 0.0;
  const double mean = MeanNll();
  const double variance = sum_squares_ / count_ - mean * mean;
  if (variance <= 0) return 0.0;
  return std::sqrt(variance / (count_ - 1)) * Perplexity();
}

namespace {

// One forward pass over windows [first, first + num) of the text, each its own sequence
// with its own blocks; returns the scored rows' logits, window after window.
std::vector<float> RunWindows(ModelExecutor& model, std::span<const int32_t> tokens, const PerplexityPlan& plan,
                              const PerplexityOptions& options, int32_t first, int32_t num, KvStorage& kv) {
  const int32_t n_ctx = plan.context_tokens;
  const int32_t blocks_per_window = (n_ctx + options.block_size - 1) / options.block_size;
  std::vector<int32_t> ids(tokens.begin() + int64_t{first} * n_ctx, tokens.begin() + int64_t{first + num} * n_ctx);
  std::vector<BlockId> blocks(static_cast<size_t>(num) * blocks_per_window);
  std::iota(blocks.begin(), blocks.end(), 0);
  std::vector<SequenceChunk> chunks;
  std::vector<int32_t> rows;
  for (int32_t w = 0; w < num; ++w) {
    if (options.bos_token_id) ids[w * n_ctx] = *options.bos_token_id;
    chunks.push_back({w * n_ctx, n_ctx, 0,
                      std::span<const BlockId>(blocks).subspan(w * blocks_per_window, blocks_per_window)});
    for (int32_t p = plan.first_scored; p < n_ctx - 1; ++p) rows.push_back(w * n_ctx + p);
  }
  std::vector<float> logits(rows.size() * model.config().vocab_size);  // [rows, vocab]
  model.Run({ids, chunks, rows}, kv, logits);
  return logits;
}

}  // namespace

StatusOr<PerplexityResult> EvaluatePerplexity(ModelExecutor& model, std::span<const int32_t> tokens,
                                         const PerplexityOptions& options, const PerplexityProgress& progress) {
  PerplexityResult result;
  ASSIGN_OR_RETURN(result.plan, PlanPerplexity(static_cast<int64_t>(tokens.size()), options.context_tokens));
  if (options.batch_tokens < 1) {
    return InvalidArgumentError("--batch-size must be positive, got " + std::to_string(options.batch_tokens));
  }
  const PerplexityPlan& plan = result.plan;
  const int64_t vocab = model.config().vocab_size;
  for (int32_t id : tokens) {
    if (id < 0 || id >= vocab) {
      return InvalidArgumentError("token id " + std::to_string(id) + " is outside the model's vocabulary of " +
                                  std::to_string(vocab));
    }
  }
  result.windows_per_pass = static_cast<int32_t>(
      std::clamp<int64_t>(options.batch_tokens / plan.context_tokens, 1, plan.num_windows));
  const int32_t blocks_per_window = (plan.context_tokens + options.block_size - 1) / options.block_size;
  KvStorage kv(model.kv_layout(options.block_size, options.kv_dtype), result.windows_per_pass * blocks_per_window);
  for (int32_t first = 0; first < plan.num_windows; first += result.windows_per_pass) {
    const int32_t num = std::min(result.windows_per_pass, plan.num_windows - first);
    const std::vector<float> logits = RunWindows(model, tokens, plan, options, first, num, kv);
    for (int32_t w = 0; w < num; ++w) {
      const int64_t window_start = int64_t{first + w} * plan.context_tokens;
      for (int32_t i = 0; i < plan.scored_per_window(); ++i) {
        const int64_t row = int64_t{w} * plan.scored_per_window() + i;
        const int32_t target = tokens[window_start + plan.first_scored + i + 1];
        result.nll.Add(TokenNll(std::span<const float>(logits).subspan(row * vocab, vocab), target));
      }
      if (progress) progress(first + w, result.nll);
    }
  }
  return result;
}

}  // namespace surge
