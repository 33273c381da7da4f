// SpecDecoder: speculative decoding's engine side. Before each step it asks the proposer
// for every decoding sequence's drafts (each up to its own adaptive k); after the pass it
// verifies a decode's drafts against the target's logits, shows an MTP proposer the
// target's hidden states of the positions kept, and counts what was proposed and taken
// (vLLM's spec_decode metrics). The proposers are in this folder (proposer.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/choice_sampler.h"
#include "engine/engine_client.h"
#include "engine/model_runner.h"
#include "engine/request_state.h"
#include "engine/scheduler.h"
#include "engine/spec_decode/proposer.h"

namespace surge {

struct SpecDecodeOptions {
  std::shared_ptr<Proposer> proposer;  // null: off
  int32_t num_speculative_tokens = 4;  // the largest k
  int32_t speculative_max_decodes = 4;  // more decodes in a step: no proposals
};

class SpecDecoder {
 public:
  SpecDecoder(SpecDecodeOptions options, int32_t hidden_size);

  bool enabled() const { return options_.proposer != nullptr; }

  // Before Schedule: sets the drafts of every running decode (none when the step has
  // more decodes than speculative_max_decodes).
  void Propose(std::span<Sequence* const> running);

  // After the pass, for a decode that carried drafts: `rows` are its 1 + num_draft_tokens
  // rows of logits. Takes tokens until a draft is rejected or the choice finishes; sets
  // result.num_accepted_drafts and result.finished, and the sequence's next k.
  void Verify(ChoiceSampler& sampler, RequestState& request, Choice& choice,
              std::span<const float> rows, const ScheduledChunk& chunk, ChunkResult& result);

  // After verification: shows a proposer that reads the target's hidden states those of
  // every position each sequence kept.
  void ShowTargetHidden(const SchedulerOutput& plan, std::span<const ChunkResult> results,
                        const ModelRunner& runner);

  // The spec_decode_* fields of EngineStats.
  void AddStats(EngineStats& stats) const;

 private:
  const SpecDecodeOptions options_;
  const size_t hidden_size_;
  std::vector<ProposalRequest> proposals_;  // reused by Propose
  int64_t num_drafts_ = 0;
  int64_t num_draft_tokens_ = 0;
  int64_t num_accepted_tokens_ = 0;
  std::vector<int64_t> accepted_per_pos_;  // [num_speculative_tokens]
};

}  // namespace surge
