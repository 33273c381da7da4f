// ChoiceSampler: takes one choice's next token from one row of logits -- the constraint's
// mask, the choice's sampler (or its verification of a speculative draft), the logprobs
// the request asks for -- and appends it to the choice. Engine-thread state: the rows it
// edits are the step's scratch, shared by every choice.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/constraint_masker.h"
#include "engine/request_state.h"
#include "engine/sampler.h"

namespace surge {

class ChoiceSampler {
 public:
  // `masker` is borrowed (its mask caches are engine-thread state).
  ChoiceSampler(ConstraintMasker& masker, int32_t vocab_size);

  // Samples `choice`'s next token from `logits` ([vocab_size]) and appends it; true when
  // the choice has finished.
  bool TakeToken(RequestState& request, Choice& choice, std::span<const float> logits);

  // Speculative decoding: the token `choice` takes at a draft's position, verified against
  // `logits` (SequenceSampler::Verify), appended as TakeToken would.
  struct Verdict {
    bool accepted = false;  // the token is the draft
    bool finished = false;  // the choice has finished
  };
  Verdict TakeOrReplace(RequestState& request, Choice& choice, std::span<const float> logits, int32_t draft);

  // Tokens sampled or verified since start-up (EngineStats::num_generation_tokens).
  int64_t num_sampled() const { return num_sampled_; }

 private:
  std::span<const float> Constrain(RequestState& request, const Choice& choice, std::span<const float> logits);
  void CopyToSampleRow(std::span<const float> row);
  const PositionLogProbs* LogProbs(const RequestState& request, std::span<const float> logits, int32_t token);

  ConstraintMasker& masker_;
  std::vector<float> sample_logits_;  // [vocab_size]: a row for the sampler to edit
  std::vector<float> masked_logits_;  // [vocab_size]: a constrained choice's masked row (with logprobs)
  SamplerScratch sampler_scratch_;
  PositionLogProbs logprobs_;
  int64_t num_sampled_ = 0;
};

}  // namespace surge
