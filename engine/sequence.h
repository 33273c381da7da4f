// Sequence: one choice of one request as the scheduler sees it -- its tokens and how
// many of them already have K/V in the cache. Sampling and text state live elsewhere
// (engine/request_state.h), so the scheduler and its tests need no model.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/kv_cache_manager.h"

namespace surge {

class RequestState;

enum class SequenceStatus : uint8_t {
  kWaiting,      // queued: holds no blocks (new, or preempted and to be recomputed)
  kRunning,      // admitted: holds blocks for positions [0, num_computed_tokens) at least
  kForkPending,  // choice > 0 of an n > 1 request: forks from choice 0 after its prefill
  kFinished,
};

// What the forward pass returns for a sequence: logits of its last row to sample from;
// those plus the logits of every prompt row (prompt logprobs: each row scores the next
// prompt token); or (embedding requests, prefill only) final hidden states -- of its last
// token once its prompt is complete, or of every token of every chunk.
enum class SequenceOutput : uint8_t { kTokens, kPromptLogits, kLastHidden, kAllHidden };

struct Sequence {
  SequenceId id = 0;
  std::vector<int32_t> token_ids;  // prompt, then generated tokens
  int32_t num_prompt_tokens = 0;
  int32_t num_computed_tokens = 0;  // positions [0, this) hold K/V
  int32_t num_cached_tokens = 0;    // of the prompt, served by the prefix cache on admission
  int32_t priority = 0;             // lower is more urgent (for the priority policy)
  double arrival_time_s = 0;        // monotonic seconds at arrival (the priority policy's aging)
  int32_t num_preemptions = 0;      // times preempted (its cached-token count is from the first admission)
  // Running slots (of max_num_seqs) this sequence takes: n for choice 0 of a request
  // whose other n - 1 choices will fork from it, so that forking never breaks the cap.
  int32_t num_seq_slots = 1;
  SequenceStatus status = SequenceStatus::kWaiting;
  SequenceOutput output = SequenceOutput::kTokens;
  RequestState* request = nullptr;  // owner; null in scheduler tests
  int32_t choice_index = 0;
  // Speculative decoding: tokens proposed to follow token_ids, for the next step to verify
  // in the same pass as its decode (engine/spec_decode/proposer.h). Unverified, so never part of
  // token_ids or of a cached block; cleared by Scheduler::Update.
  std::vector<int32_t> draft_token_ids;
  int32_t num_speculative_tokens = 0;  // the proposal length this sequence is allowed now

  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
  int32_t num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
  // Tokens the model has not seen: 1 for a decode; more while prefilling (a prompt, or
  // prompt + output again after preemption).
  int32_t num_pending_tokens() const { return num_tokens() - num_computed_tokens; }
};

}  // namespace surge
