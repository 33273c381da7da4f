#include "engine/choice_sampler.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace surge {

ChoiceSampler::ChoiceSampler(ConstraintMasker& masker, int32_t vocab_size)
    : masker_(masker), sample_logits_(vocab_size), masked_logits_(vocab_size) {}

bool ChoiceSampler::TakeToken(RequestState& request, Choice& choice, std::span<const float> logits) {
  if (choice.finished || request.failed()) return true;  // a sibling's constraint failed the request
  std::span<const float> row = Constrain(request, choice, logits);
  if (row.empty()) return true;
  CopyToSampleRow(row);
  ++num_sampled_;
  const int32_t token = choice.sampler.Sample(sample_logits_, sampler_scratch_);
  return request.AppendToken(choice, token, LogProbs(request, row, token));
}

ChoiceSampler::Verdict ChoiceSampler::TakeOrReplace(RequestState& request, Choice& choice,
                                                    std::span<const float> logits, int32_t draft) {
  std::span<const float> row = Constrain(request, choice, logits);
  if (row.empty()) return {.accepted = false, .finished = true};
  CopyToSampleRow(row);
  ++num_sampled_;
  const SequenceSampler::Verdict verdict = choice.sampler.Verify(sample_logits_, draft, sampler_scratch_);
  return {verdict.accepted, request.AppendToken(choice, verdict.token, LogProbs(request, row, verdict.token))};
}

// The row a choice samples from: the model's logits or, under an active constraint, a copy
// with the disallowed tokens at -inf -- before logit bias, penalties, temperature and the
// truncations, so that no sampling rule can bring a disallowed token back. The mask reads
// only the choice's own matcher: batch neighbours never change it. Without logprobs the
// copy is the sampler's own row (one copy, not two); logprobs read the masked row after
// sampling, which edits its row, so then it has one of its own. A mask that passes the
// grammar's limits (ConstraintLimits::max_mask_work, the matcher's state) fails the request
// with that reason, and the empty row says so: never a guessed mask. The caller ends the
// request's other choices (OutputProcessor: RequestState::failed).
std::span<const float> ChoiceSampler::Constrain(RequestState& request, const Choice& choice,
                                                std::span<const float> logits) {
  if (!choice.constraint.active()) return logits;
  std::span<float> out = request.request().top_logprobs >= 0 ? std::span<float>(masked_logits_)
                                                             : std::span<float>(sample_logits_);
  if (masker_.Mask(choice.constraint.matcher(), logits, out)) return out;
  const ConstraintLimits& limits = choice.constraint.matcher().grammar().limits();
  std::ostringstream message;
  message << "the output constraint cannot be followed further: the next token's mask needs more than "
          << limits.max_mask_work << " steps of work or a parse state over " << limits.max_matcher_words
          << " words (the grammar is too ambiguous or too deeply nested here)";
  request.Fail(ResourceExhaustedError(message.str()));
  return {};
}

void ChoiceSampler::CopyToSampleRow(std::span<const float> row) {
  if (row.data() != sample_logits_.data()) std::copy(row.begin(), row.end(), sample_logits_.begin());
}

// Log-probabilities come from the logits before penalties and temperature (as OpenAI and
// vLLM report them), but after a constraint's mask: a constrained choice reports the
// distribution it was sampled from, renormalized over the allowed tokens (as vLLM's
// processed logprobs do), so disallowed tokens never show among the alternatives.
const PositionLogProbs* ChoiceSampler::LogProbs(const RequestState& request, std::span<const float> logits,
                                             int32_t token) {
  if (request.request().top_logprobs < 0) return nullptr;
  ComputeLogProbs(logits, token, request.request().top_logprobs, &logprobs_);
  std::erase_if(logprobs_.top, [](const ScoredToken& entry) { return entry.logprob == -INFINITY; });
  return &logprobs_;
}

}  // namespace surge
