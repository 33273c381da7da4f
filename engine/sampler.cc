#include "engine/sampler.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace surge {
namespace {

// Top-p first buckets the candidates by (max_logit - logit) / T, a quarter nat per bucket
// (weights within 1.28x), over the 16 nats below the max; the nucleus rarely reaches
// further, and when it does every candidate stays in the search.
constexpr size_t kTopPBuckets = 64;
constexpr float kTopPBucketsPerNat = 4.0f;
// Below this many candidates the top-p quickselect just sorts.
constexpr size_t kTopPSortSize = 32;

// First index of the largest logit: ties go to the lowest id; NaNs are never chosen
// over a number. (A plain loop: std::max_element measured 2.5x slower here.)
// TODO(sampler): use kernels' SIMD Argmax once the engine links surge_kernels.
int32_t Argmax(std::span<const float> logits) {
  size_t best = 0;
  float best_logit = logits[0];
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > best_logit || best_logit != best_logit) {
      best = i;
      best_logit = logits[i];
    }
  }
  return static_cast<int32_t>(best);
}

uint64_t RandomSeed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

// --- TokenCounts ---

void TokenCounts::Add(int32_t token) {
  DCHECK(token >= 0);
  if (2 * (tokens_.size() + 1) > slots_.size()) Grow();  // keep the load at most 1/2
  size_t slot = Slot(token);
  if (slots_[slot] >= 0) {
    ++counts_[slots_[slot]];
    return;
  }
  slots_[slot] = static_cast<int32_t>(tokens_.size());
  tokens_.push_back(token);
  counts_.push_back(1);
}

int32_t TokenCounts::Count(int32_t token) const {
  if (slots_.empty()) return 0;
  int32_t index = slots_[Slot(token)];
  return index < 0 ? 0 : counts_[index];
}

size_t TokenCounts::Slot(int32_t token) const {
  // Fibonacci hashing: the top bits of the product spread consecutive ids apart.
  const int shift = 64 - std::countr_zero(slots_.size());
  const uint64_t key = static_cast<uint32_t>(token);
  size_t slot = (key * 0x9E3779B97F4A7C15ull) >> shift;
  const size_t mask = slots_.size() - 1;
  while (slots_[slot] >= 0 && tokens_[slots_[slot]] != token) slot = (slot + 1) & mask;
  return slot;
}

void TokenCounts::Grow() {
  slots_.assign(std::max<size_t>(16, 2 * slots_.size()), -1);
  for (size_t i = 0; i < tokens_.size(); ++i) slots_[Slot(tokens_[i])] = static_cast<int32_t>(i);
}

// --- SequenceSampler ---

SequenceSampler::SequenceSampler(const SamplingParams& params, std::span<const int32_t> prompt_ids)
    : params_(params), rng_(params.seed ? *params.seed : RandomSeed()) {
  DCHECK(params.Validate().ok());
  if (params_.repetition_penalty != 1.0) {
    prompt_tokens_.assign(prompt_ids.begin(), prompt_ids.end());
    std::sort(prompt_tokens_.begin(), prompt_tokens_.end());
    prompt_tokens_.erase(std::unique(prompt_tokens_.begin(), prompt_tokens_.end()),
                         prompt_tokens_.end());
  }
}

void SequenceSampler::Accept(int32_t token) {
  CHECK_GE(token, 0);
  // Counts feed only the penalties; without them the request keeps no per-token state.
  if (params_.repetition_penalty != 1.0 || params_.frequency_penalty != 0.0 ||
      params_.presence_penalty != 0.0) {
    output_counts_.Add(token);
  }
}

void SequenceSampler::ApplyPenalties(std::span<float> logits) const {
  const auto in_vocab = [&](int32_t token) { return token >= 0 && size_t(token) < logits.size(); };
  for (const auto& [token, bias] : params_.logit_bias) {
    if (in_vocab(token)) logits[token] += bias;
  }
  if (params_.repetition_penalty != 1.0) {
    const float penalty = static_cast<float>(params_.repetition_penalty);
    // Divide positive logits and multiply the rest, so "seen" always means less likely.
    const auto penalize = [&](int32_t token) {
      if (!in_vocab(token)) return;
      float& logit = logits[token];
      logit = logit > 0 ? logit / penalty : logit * penalty;
    };
    for (int32_t token : prompt_tokens_) penalize(token);
    for (int32_t token : output_counts_.tokens()) {
      if (!std::binary_search(prompt_tokens_.begin(), prompt_tokens_.end(), token)) penalize(token);
    }
  }
  if (params_.frequency_penalty == 0.0 && params_.presence_penalty == 0.0) return;
  const float frequency = static_cast<float>(params_.frequency_penalty);
  const float presence = static_cast<float>(params_.presence_penalty);
  std::span<const int32_t> tokens = output_counts_.tokens();
  std::span<const int32_t> counts = output_counts_.counts();
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!in_vocab(tokens[i])) continue;
    // Two float subtractions, as vLLM does them.
    logits[tokens[i]] -= frequency * static_cast<float>(counts[i]);
    logits[tokens[i]] -= presence;
  }
}

int32_t SequenceSampler::Sample(std::span<float> logits, SamplerScratch& scratch) {
  CHECK(!logits.empty());
  ApplyPenalties(logits);
  if (params_.greedy()) return Argmax(logits);
  return SampleRandom(logits, scratch.candidates);
}

double SequenceSampler::NextUniform() {
  // The top 53 bits: std::uniform_real_distribution differs between standard libraries.
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

namespace {

// The order every truncation uses: larger logit first, then lower id. A strict total
// order, so the kept set never depends on how a selection algorithm happens to permute.
bool MoreLikely(const SamplerCandidate& a, const SamplerCandidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.token < b.token);
}

// Leaves the k most likely tokens in `out` (unordered). For small k a heap of the best k
// so far (least likely on top) costs one comparison per token; for large k, nth_element.
void SelectTopK(std::span<const float> logits, size_t k, std::vector<SamplerCandidate>& out) {
  out.clear();
  if (k > logits.size() / 4) {
    for (size_t i = 0; i < logits.size(); ++i) out.push_back({logits[i], 0.0f, int32_t(i)});
    std::nth_element(out.begin(), out.begin() + k, out.end(), MoreLikely);
    out.resize(k);
    return;
  }
  for (size_t i = 0; i < k; ++i) out.push_back({logits[i], 0.0f, int32_t(i)});
  std::make_heap(out.begin(), out.end(), MoreLikely);
  for (size_t i = k; i < logits.size(); ++i) {
    if (!(logits[i] > out.front().logit)) continue;  // a tie loses to the lower id kept
    std::pop_heap(out.begin(), out.end(), MoreLikely);
    out.back() = {logits[i], 0.0f, int32_t(i)};
    std::push_heap(out.begin(), out.end(), MoreLikely);
  }
}

double TotalWeight(std::span<const SamplerCandidate> candidates) {
  double total = 0.0;
  for (const SamplerCandidate& c : candidates) total += c.weight;
  return total;
}

// Keeps the first candidates, in MoreLikely order, whose preceding mass is below
// `target`: a quickselect on mass that halves the range each round, O(n) expected.
// Returns the mass kept.
double KeepMassPrefix(double target, std::vector<SamplerCandidate>& candidates) {
  // Invariant: [0, lo) are the lo most likely candidates and hold mass_above < target;
  // the number to keep lies in (lo, hi].
  size_t lo = 0, hi = candidates.size();
  double mass_above = 0.0;
  while (hi - lo > kTopPSortSize) {
    const size_t mid = lo + (hi - lo) / 2;
    auto first = candidates.begin();
    std::nth_element(first + lo, first + mid, first + hi, MoreLikely);
    double upper = TotalWeight(std::span(candidates).subspan(lo, mid - lo));
    if (mass_above + upper >= target) {
      hi = mid;
    } else {
      lo = mid;
      mass_above += upper;
    }
  }
  std::sort(candidates.begin() + lo, candidates.begin() + hi, MoreLikely);
  size_t num_keep = lo;
  while (num_keep < hi && mass_above < target) mass_above += candidates[num_keep++].weight;
  candidates.resize(num_keep);
  return mass_above;
}

// Drops candidates lighter than `min_weight`; returns the mass kept.
double KeepAtLeast(float min_weight, std::vector<SamplerCandidate>& candidates) {
  double total = 0.0;
  size_t num_keep = 0;
  for (const SamplerCandidate& c : candidates) {
    if (c.weight < min_weight) continue;
    candidates[num_keep++] = c;
    total += c.weight;
  }
  candidates.resize(num_keep);
  return total;
}

// The candidate at which the running mass first passes `target` (in [0, total)).
int32_t Draw(std::span<const SamplerCandidate> candidates, double target) {
  double mass = 0.0;
  for (const SamplerCandidate& c : candidates) {
    mass += c.weight;
    if (target < mass) return c.token;
  }
  // Rounding put the target at the very end: take the last token with any weight.
  for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
    if (it->weight > 0.0f) return it->token;
  }
  return candidates.front().token;
}

}  // namespace

// Steps 3-7 on a list of candidates, so the logits themselves are only read.
int32_t SequenceSampler::SampleRandom(std::span<const float> logits,
                                      std::vector<SamplerCandidate>& candidates) {
  const double total = Survivors(logits, candidates);
  if (total == 0.0) return Argmax(logits);  // all masked, or an inf: no weights
  return Draw(candidates, NextUniform() * total);
}

double SequenceSampler::Survivors(std::span<const float> logits,
                                  std::vector<SamplerCandidate>& candidates) const {
  const size_t top_k = params_.top_k > 0 ? static_cast<size_t>(params_.top_k) : logits.size();
  if (top_k < logits.size()) {
    SelectTopK(logits, top_k, candidates);
  } else {
    candidates.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) candidates[i] = {logits[i], 0.0f, int32_t(i)};
  }
  float max_logit = -std::numeric_limits<float>::infinity();
  for (const SamplerCandidate& c : candidates) max_logit = std::max(max_logit, c.logit);
  if (!std::isfinite(max_logit)) return 0.0;
  const float inv_temperature = static_cast<float>(1.0 / params_.temperature);
  double total = 0.0;
  for (SamplerCandidate& c : candidates) {
    c.weight = std::exp((c.logit - max_logit) * inv_temperature);
    total += c.weight;
  }
  if (params_.top_p < 1.0) total = ApplyTopP(max_logit, total, candidates);
  // The most likely token survives top-k and top-p and weighs exactly 1.
  if (params_.min_p > 0.0) total = KeepAtLeast(static_cast<float>(params_.min_p), candidates);
  return total;
}

SequenceSampler::Verdict SequenceSampler::Verify(std::span<float> logits, int32_t draft,
                                                 SamplerScratch& scratch) {
  CHECK(!logits.empty());
  ApplyPenalties(logits);
  if (params_.greedy()) {
    const int32_t token = Argmax(logits);
    return {token, token == draft};
  }
  std::vector<SamplerCandidate>& candidates = scratch.candidates;
  const double total = Survivors(logits, candidates);
  if (total == 0.0) {
    const int32_t token = Argmax(logits);
    return {token, token == draft};
  }
  double draft_weight = 0.0;
  for (const SamplerCandidate& c : candidates) {
    if (c.token == draft) draft_weight = c.weight;
  }
  // Accept with probability p(draft); a draft Sample could never draw costs no draw.
  if (draft_weight > 0.0 && NextUniform() * total < draft_weight) return {draft, true};
  if (draft_weight >= total) return {draft, true};  // rounding: the draft holds all the mass
  std::erase_if(candidates, [&](const SamplerCandidate& c) { return c.token == draft; });
  return {Draw(candidates, NextUniform() * (total - draft_weight)), false};
}

// Keeps the smallest set of most likely tokens whose mass reaches top_p of the total: a
// token survives iff the tokens more likely than it hold less than top_p. A histogram of
// mass by distance from the max logit first narrows the search to the buckets the
// nucleus reaches (usually a few dozen tokens); KeepMassPrefix then finishes exactly.
// Returns the mass kept.
double SequenceSampler::ApplyTopP(float max_logit, double total,
                                  std::vector<SamplerCandidate>& candidates) const {
  const float buckets_per_unit = kTopPBucketsPerNat / static_cast<float>(params_.temperature);
  // Distance in buckets; monotone in the logit, so a bucket prefix is a MoreLikely prefix.
  // -inf logits (masked tokens) give +inf.
  const auto distance = [&](float logit) { return (max_logit - logit) * buckets_per_unit; };
  std::array<double, kTopPBuckets> bucket_mass{};
  for (const SamplerCandidate& c : candidates) {
    float d = distance(c.logit);
    if (d < float(kTopPBuckets)) bucket_mass[size_t(d)] += c.weight;  // the far tail is skipped
  }
  const double target = params_.top_p * total;
  double mass = 0.0;
  size_t num_buckets = 0;
  while (num_buckets < kTopPBuckets && mass < target) mass += bucket_mass[num_buckets++];
  if (mass >= target) {
    std::erase_if(candidates, [&](const SamplerCandidate& c) {
      return !(distance(c.logit) < float(num_buckets));
    });
  }
  return KeepMassPrefix(target, candidates);
}

// --- Log-probabilities ---

void ComputeLogProbs(std::span<const float> logits, int32_t token, int32_t num_top,
                     PositionLogProbs* out) {
  CHECK(token >= 0 && size_t(token) < logits.size());
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float logit : logits) sum += std::exp(static_cast<double>(logit - max_logit));
  const double log_z = max_logit + std::log(sum);
  out->chosen = {token, static_cast<float>(logits[token] - log_z)};

  // A heap of the best num_top seen so far with the worst on top: O(vocab log num_top).
  const auto better = [](const ScoredToken& a, const ScoredToken& b) {
    return a.logprob > b.logprob || (a.logprob == b.logprob && a.token < b.token);
  };
  const size_t num_keep = std::min<size_t>(std::max(num_top, 0), logits.size());
  std::vector<ScoredToken>& top = out->top;
  top.clear();
  for (size_t i = 0; i < logits.size() && num_keep > 0; ++i) {
    ScoredToken entry{static_cast<int32_t>(i), logits[i]};
    if (top.size() < num_keep) {
      top.push_back(entry);
      std::push_heap(top.begin(), top.end(), better);
    } else if (better(entry, top.front())) {
      std::pop_heap(top.begin(), top.end(), better);
      top.back() = entry;
      std::push_heap(top.begin(), top.end(), better);
    }
  }
  std::sort_heap(top.begin(), top.end(), better);
  for (ScoredToken& entry : top) entry.logprob = static_cast<float>(entry.logprob - log_z);
}

}  // namespace surge
