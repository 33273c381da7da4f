// Sampler: turns one sequence's logits into its next token (greedy, temperature, top-k,
// top-p, min-p, repetition/presence/frequency penalties) with a per-request seeded RNG.
//
// The order is vLLM's, so that a request means the same here as there:
//   0. logit bias (OpenAI's logit_bias): added to the raw logits of its tokens, before
//      anything else, so that -100 bans a token and +100 all but forces it, greedy too.
//   1. repetition penalty over tokens of the prompt AND the output (logit > 0: /p, else *p);
//      it is a multiplicative "seen before" penalty (CTRL paper), applied once per token.
//   2. frequency and presence penalties over output tokens only (OpenAI's definition):
//      logit -= frequency * count + presence * (count > 0).
//      Penalties come first because they edit logits; everything after works on the
//      distribution they define, and greedy decoding sees them too.
//   3. temperature: logits / T. Before any truncation so that top-p and min-p measure
//      the distribution actually sampled from. T below 1e-5 (vLLM's epsilon) is greedy:
//      argmax, ties to the lowest id.
//   4. top-k: keep the k largest logits. Every cut orders by logit, ties to the lower id.
//   5. top-p: keep the smallest set of most likely tokens whose mass (renormalized over
//      the top-k survivors) reaches p; at least one token always survives.
//   6. min-p: drop tokens whose probability is below min_p * the largest probability.
//      Ratios do not change under renormalization, so running it after top-k/top-p only
//      matters for which tokens are still there (vLLM v0's order; v1 runs min-p before
//      top-k/top-p on the full distribution).
//   7. draw one token from the survivors, renormalized.
//
// Batch invariance: each request owns its RNG and its token counts, and one call reads
// only its own row of logits, so a request's tokens depend on its seed and logits alone,
// never on what else is in the batch. A non-greedy Sample consumes exactly one draw.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/sampling_params.h"

namespace surge {

// A token still in play while one row is sampled.
struct SamplerCandidate {
  float logit;   // after penalties
  float weight;  // exp((logit - max_logit) / T): the most likely token weighs 1
  int32_t token;
};

// Scratch space for one Sample call, grown to the vocabulary size on first use and then
// reused. The engine keeps one per sampling thread and lends it to every sequence, so a
// request costs O(prompt + output) memory instead of O(vocab).
struct SamplerScratch {
  std::vector<SamplerCandidate> candidates;  // [<= vocab_size] tokens still in play
};

// Output-token counts in an open-addressing table, so that Accept allocates only when
// the table doubles (amortized, like a vector), never per token.
class TokenCounts {
 public:
  void Add(int32_t token);
  int32_t Count(int32_t token) const;
  // Distinct tokens in first-seen order and their counts: tokens()[i] seen counts()[i] times.
  std::span<const int32_t> tokens() const { return tokens_; }
  std::span<const int32_t> counts() const { return counts_; }

 private:
  size_t Slot(int32_t token) const;  // the slot holding `token`, or the empty one it hashes to
  void Grow();

  std::vector<int32_t> slots_;  // [capacity, a power of two] index into tokens_, or -1
  std::vector<int32_t> tokens_;
  std::vector<int32_t> counts_;
};

// One request's sampling state.
class SequenceSampler {
 public:
  // `params` must have passed Validate().
  SequenceSampler(const SamplingParams& params, std::span<const int32_t> prompt_ids);

  // Picks the next token from `logits` ([vocab_size]); the penalties are applied to them
  // in place. Does not record the token: call Accept with the token the sequence takes.
  int32_t Sample(std::span<float> logits, SamplerScratch& scratch);
  int32_t Sample(std::span<float> logits) { return Sample(logits, own_scratch_); }
  void Accept(int32_t token);

  // Speculative decoding's verification of one proposed token: returns the token the
  // sequence takes at this position and whether it is `draft`. Greedy: the argmax (the
  // draft is accepted iff it is the argmax, so the output is the non-speculative one
  // exactly). Sampling: rejection sampling against a deterministic proposal (q is one-hot
  // on the draft): the draft is kept with probability p(draft) under the distribution
  // Sample would draw from; otherwise one token is drawn from p with the draft removed,
  // renormalized -- so P(token = x) = p(x), the target distribution, whatever proposed it.
  // Edits `logits` as Sample does; does not Accept.
  struct Verdict {
    int32_t token;
    bool accepted;
  };
  Verdict Verify(std::span<float> logits, int32_t draft, SamplerScratch& scratch);

  // Steps 0 to 2 above, in place. Ids outside the logits (e.g. prompt tokens the model's
  // vocabulary lacks) are ignored.
  void ApplyPenalties(std::span<float> logits) const;

  const SamplingParams& params() const { return params_; }

 private:
  int32_t SampleRandom(std::span<const float> logits, std::vector<SamplerCandidate>& candidates);
  // Steps 4-6: leaves the tokens Sample may draw in `candidates` with their weights;
  // returns their total weight, or 0 when no logit is finite (then Sample takes the argmax).
  double Survivors(std::span<const float> logits, std::vector<SamplerCandidate>& candidates) const;
  double ApplyTopP(float max_logit, double total, std::vector<SamplerCandidate>& candidates) const;
  double NextUniform();  // in [0, 1), the same on every platform for a given seed

  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<int32_t> prompt_tokens_;  // distinct, sorted; only with a repetition penalty
  TokenCounts output_counts_;
  SamplerScratch own_scratch_;  // for the one-argument Sample; empty until then
};

// Log-probability of one token under a distribution, for OpenAI `logprobs`. The engine's
// working form; what a client receives is TokenLogprob (engine_client.h), with the text.
struct ScoredToken {
  int32_t token = 0;
  float logprob = 0.0f;
};

// One position's scores: the token taken and the most likely alternatives.
struct PositionLogProbs {
  ScoredToken chosen;
  std::vector<ScoredToken> top;  // most likely first, ties to the lower id
};

// log_softmax(logits) at `token`, plus the `num_top` most likely tokens. OpenAI and vLLM
// report the model's raw distribution, so pass the logits as the model produced them
// (before Sample rewrites them). Reuses out->top's capacity: no allocation once warm.
void ComputeLogProbs(std::span<const float> logits, int32_t token, int32_t num_top,
                     PositionLogProbs* out);

}  // namespace surge
