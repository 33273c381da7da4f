// ForwardPass::MoeMlp: DeepSeek's MoE MLP over a flat batch. Tokens are routed, their rows
// grouped by expert so each expert's weights are read once per step, the experts run as
// ordinary MatMuls over their groups, and each token sums its experts' outputs in
// ascending expert order (fixed per token, so batch-invariant), then the shared experts.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/phase_profile.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/vec_ops.h"
#include "model/model_forward.h"
#include "model/moe_router.h"

namespace surge {

void ForwardPass::ReserveMoe(int64_t num_tokens) {
  const MoeConfig& c = *config_.moe;
  const int64_t slots = num_tokens * c.num_experts_per_tok, hidden = config_.hidden_size;
  GrowTo(moe_act_.router_logits, num_tokens * c.n_routed_experts);
  GrowTo(moe_act_.expert_ids, slots);
  GrowTo(moe_act_.expert_weights, slots);
  GrowTo(moe_act_.slot_row, slots);
  GrowTo(moe_act_.expert_begin, c.n_routed_experts + 1);
  GrowTo(moe_act_.expert_fill, c.n_routed_experts);
  moe_act_.active_experts.reserve(c.n_routed_experts);
  GrowTo(moe_act_.input, slots * hidden);
  GrowTo(moe_act_.gate_up, slots * 2 * c.moe_intermediate_size);
  GrowTo(moe_act_.act, slots * c.moe_intermediate_size);
  GrowTo(moe_act_.output, slots * hidden);
  GrowTo(moe_act_.routed, num_tokens * hidden);
}

void ForwardPass::MoeMlp(const LayerWeights& layer, int64_t num_tokens) {
  const MoeConfig& c = *config_.moe;
  const MoeWeights& moe = *layer.moe;
  const int64_t n = c.n_routed_experts, k = c.num_experts_per_tok, hidden = config_.hidden_size;
  PhaseMarks marks;
  MatMul(act_.normed.data(), num_tokens, moe.router.matrix(), nullptr,
         moe_act_.router_logits.data(), pool_);
  const bool v3 = config_.architecture == Architecture::kDeepseekV3;
  const float* bias = moe.score_bias.empty() ? nullptr : moe.score_bias.data();
  pool_->ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    float scratch[2 * kMaxRoutedExperts];
    for (int64_t t = begin; t < end; ++t) {
      RouteToken(c, v3, &moe_act_.router_logits[t * n], bias, scratch,
                 &moe_act_.expert_ids[t * k], &moe_act_.expert_weights[t * k]);
    }
  });
  GroupByExpert(num_tokens);
  marks.Mark(Phase::kMoeRoute);
  RunExperts(moe);
  marks.Mark(Phase::kMoeExperts);
  const VecOps& ops = ActiveVecOps();
  pool_->ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* sum = &moe_act_.routed[t * hidden];
      std::fill_n(sum, hidden, 0.0f);
      for (int64_t i = 0; i < k; ++i) {
        ops.axpy(moe_act_.expert_weights[t * k + i],
                 &moe_act_.output[moe_act_.slot_row[t * k + i] * hidden], sum, hidden);
      }
    }
  });
  if (layer.down.weight.empty()) {  // no shared experts
    std::memcpy(act_.normed.data(), moe_act_.routed.data(), num_tokens * hidden * sizeof(float));
    marks.Mark(Phase::kMoeRoute);
    return;
  }
  marks.Mark(Phase::kMoeRoute);
  DenseMlp(layer.gate_up, layer.down, num_tokens);
  marks = PhaseMarks();
  pool_->ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    AddInPlace(&moe_act_.routed[begin * hidden], &act_.normed[begin * hidden],
               (end - begin) * hidden);
  });
  marks.Mark(Phase::kResidual);
}

// Counting sort of the (token, slot) pairs by expert: expert e's rows are
// [expert_begin[e], expert_begin[e + 1]) of `input`, tokens ascending; slot_row says
// where each pair landed.
void ForwardPass::GroupByExpert(int64_t num_tokens) {
  const MoeConfig& c = *config_.moe;
  const int64_t n = c.n_routed_experts, k = c.num_experts_per_tok, hidden = config_.hidden_size;
  std::vector<int32_t>& begin = moe_act_.expert_begin;
  std::fill_n(begin.begin(), n + 1, 0);
  for (int64_t s = 0; s < num_tokens * k; ++s) ++begin[moe_act_.expert_ids[s] + 1];
  for (int64_t e = 0; e < n; ++e) begin[e + 1] += begin[e];
  std::vector<int32_t>& next = moe_act_.expert_fill;
  std::copy_n(begin.begin(), n, next.begin());
  for (int64_t s = 0; s < num_tokens * k; ++s) moe_act_.slot_row[s] = next[moe_act_.expert_ids[s]]++;
  pool_->ParallelFor(num_tokens, [&](int64_t first, int64_t last) {
    for (int64_t s = first * k; s < last * k; ++s) {
      std::memcpy(&moe_act_.input[moe_act_.slot_row[s] * hidden], &act_.normed[(s / k) * hidden],
                  hidden * sizeof(float));
    }
  });
}

// Each expert with rows: output = down(silu(gate(input)) * up(input)) on its group. The
// experts run side by side, one per thread at a time (a decode step gives each only a
// few rows, and one pool dispatch per layer beats three per expert); when fewer experts
// than threads have rows, each one's MatMuls use the pool instead.
void ForwardPass::RunExperts(const MoeWeights& moe) {
  const int64_t inter = config_.moe->moe_intermediate_size, hidden = config_.hidden_size;
  std::vector<int32_t>& active = moe_act_.active_experts;
  active.clear();
  for (size_t e = 0; e < moe.experts.size(); ++e) {
    if (moe_act_.expert_begin[e + 1] > moe_act_.expert_begin[e]) active.push_back(static_cast<int32_t>(e));
  }
  const bool across_experts = static_cast<int64_t>(active.size()) >= pool_->num_threads();
  ThreadPool* inner = across_experts ? nullptr : pool_;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int32_t e = active[i];
      const int64_t first = moe_act_.expert_begin[e], rows = moe_act_.expert_begin[e + 1] - first;
      const MoeWeights::Expert& expert = moe.experts[e];
      float* gate_up = &moe_act_.gate_up[first * 2 * inter];
      float* act = &moe_act_.act[first * inter];
      MatMul(&moe_act_.input[first * hidden], rows, expert.gate_up.matrix(), nullptr, gate_up, inner);
      for (int64_t r = 0; r < rows; ++r) {
        SiluMul(&gate_up[r * 2 * inter], &gate_up[r * 2 * inter + inter], inter, &act[r * inter]);
      }
      MatMul(act, rows, expert.down.matrix(), nullptr, &moe_act_.output[first * hidden], inner);
    }
  };
  if (across_experts) {
    pool_->ParallelFor(static_cast<int64_t>(active.size()), 1, run);
  } else {
    run(0, static_cast<int64_t>(active.size()));
  }
}

}  // namespace surge
