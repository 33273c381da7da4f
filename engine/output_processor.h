// OutputProcessor: the engine step's output stage. After each forward pass it turns the
// logits and hidden states into every scheduled request's news: embedding chunks are
// pooled, prompt tokens scored (echo logprobs), tokens sampled under their constraints
// with their logprobs, n > 1 requests forked after their first token, speculative drafts
// verified (spec_decode/spec_decoder.h); each chunk's ChunkResult tells the scheduler what
// finished and which drafts were kept. Engine-thread state.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/choice_sampler.h"
#include "engine/model_runner.h"
#include "engine/request_state.h"
#include "engine/scheduler.h"
#include "engine/spec_decode/spec_decoder.h"

namespace surge {

class OutputProcessor {
 public:
  // All borrowed: the engine's scheduler (finished choices and forks), its constraint
  // masker and its speculative decoder.
  OutputProcessor(Scheduler& scheduler, ConstraintMasker& masker, SpecDecoder& spec_decoder,
                  int32_t vocab_size);

  // The one entry point: `logits` and `runner`'s hidden states are the pass over `plan`
  // (ModelRunner::Run). Fills results ([plan chunks], for Scheduler::Update) and lists
  // every request with news in `touched`.
  void Process(const SchedulerOutput& plan, std::span<const float> logits, const ModelRunner& runner,
               std::vector<ChunkResult>& results, TouchedRequests& touched);

  // Counters since start-up (EngineStats).
  int64_t num_prompt_tokens_computed() const { return num_prompt_tokens_computed_; }
  int64_t num_generation_tokens() const { return sampler_.num_sampled(); }

 private:
  // The rows of one token-generating chunk; returns them consumed.
  size_t ProcessTokenChunk(const ScheduledChunk& chunk, std::span<const float> logits, size_t row,
                           ChunkResult& result, TouchedRequests& touched);
  void PoolChunk(const ScheduledChunk& chunk, std::span<const float> rows, ChunkResult& result,
                 TouchedRequests& touched);
  void ScorePrompt(const ScheduledChunk& chunk, std::span<const float> rows);
  void FinishAllChoices(RequestState& request, FinishReason reason);
  void SampleFirstTokensAndFork(RequestState& request, std::span<const float> logits, ChunkResult& result);

  Scheduler& scheduler_;
  SpecDecoder& spec_decoder_;
  const int32_t vocab_size_;
  ChoiceSampler sampler_;
  std::vector<Sequence*> children_;  // reused by SampleFirstTokensAndFork
  PositionLogProbs prompt_logprobs_;    // reused by ScorePrompt
  int64_t num_prompt_tokens_computed_ = 0;
};

}  // namespace surge
