#include "model/moe_router.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/check.h"

namespace surge {
namespace {

// Indices of the k largest of values[n], largest first; ties to the lower index.
void TopK(const float* values, int64_t n, int64_t k, int32_t* out) {
  int32_t order[kMaxRoutedExperts];
  CHECK_LE(n, kMaxRoutedExperts) << "router: too many experts or groups";
  std::iota(order, order + n, 0);
  std::partial_sort(order, order + k, order + n, [values](int32_t a, int32_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
  std::copy_n(order, k, out);
}

void Scores(MoeConfig::Scoring scoring, const float* logits, int64_t n, float* scores) {
  if (scoring == MoeConfig::Scoring::kSigmoid) {
    for (int64_t e = 0; e < n; ++e) scores[e] = 1.0f / (1.0f + std::exp(-logits[e]));
    return;
  }
  const float max = *std::max_element(logits, logits + n);
  float sum = 0.0f;
  for (int64_t e = 0; e < n; ++e) sum += scores[e] = std::exp(logits[e] - max);
  for (int64_t e = 0; e < n; ++e) scores[e] /= sum;
}

// Keeps the experts of the topk_group best groups in `choice`; the others get `fill`.
// A group's score is its best expert's (group_limited_greedy) or the sum of its best two
// (noaux_tc).
void MaskGroups(const MoeConfig& c, float fill, float* choice) {
  const int64_t group_size = c.n_routed_experts / c.n_group;
  float group_scores[kMaxRoutedExperts];
  for (int64_t g = 0; g < c.n_group; ++g) {
    const float* group = choice + g * group_size;
    if (c.topk_method == MoeConfig::TopkMethod::kNoauxTc) {
      int32_t best[2];
      TopK(group, group_size, std::min<int64_t>(2, group_size), best);
      group_scores[g] = group[best[0]] + (group_size > 1 ? group[best[1]] : 0.0f);
    } else {
      group_scores[g] = *std::max_element(group, group + group_size);
    }
  }
  int32_t kept[kMaxRoutedExperts];
  TopK(group_scores, c.n_group, c.topk_group, kept);
  bool keep[kMaxRoutedExperts] = {};
  for (int64_t i = 0; i < c.topk_group; ++i) keep[kept[i]] = true;
  for (int64_t e = 0; e < c.n_routed_experts; ++e) {
    if (!keep[e / group_size]) choice[e] = fill;
  }
}

}  // namespace

void RouteToken(const MoeConfig& c, bool v3_scaling, const float* logits,
                const float* score_bias, float* scratch, int32_t* ids, float* weights) {
  const int64_t n = c.n_routed_experts, k = c.num_experts_per_tok;
  float* scores = scratch;      // [n]
  float* choice = scratch + n;  // [n]: what the top-k is taken over
  Scores(c.scoring_func, logits, n, scores);
  for (int64_t e = 0; e < n; ++e) choice[e] = scores[e] + (score_bias ? score_bias[e] : 0.0f);
  if (c.topk_method == MoeConfig::TopkMethod::kNoauxTc) {
    MaskGroups(c, -std::numeric_limits<float>::infinity(), choice);
  } else if (c.topk_method == MoeConfig::TopkMethod::kGroupLimitedGreedy) {
    MaskGroups(c, 0.0f, choice);
  }
  TopK(choice, n, k, ids);
  std::sort(ids, ids + k);  // the order the expert outputs are summed in
  float sum = 0.0f;
  for (int64_t i = 0; i < k; ++i) sum += weights[i] = scores[ids[i]];
  const bool normalized = k > 1 && c.norm_topk_prob;
  const float factor = static_cast<float>(c.routed_scaling_factor);
  for (int64_t i = 0; i < k; ++i) {
    if (normalized) weights[i] /= sum + 1e-20f;
    if (v3_scaling || !normalized) weights[i] *= factor;
  }
}

}  // namespace surge
