// Scheduler: continuous batching with chunked prefill. Each step it decides which
// sequences run and how many tokens each, within a token budget and a sequence cap,
// getting KV blocks from the KvCacheManager and preempting (by recompute) when they run
// out. Owns no sequences; runs on the engine thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "engine/scheduling_policy.h"
#include "engine/sequence.h"
#include "kv/kv_cache_manager.h"

namespace surge {

struct SchedulerOptions {
  int32_t max_num_seqs = 256;             // running sequences at once
  int32_t max_num_batched_tokens = 2048;  // tokens per forward pass (decodes + chunks)
  // Tokens per step of sequences that score their prompt (kPromptLogits): each is a
  // [vocab_size] logits row, so this bounds the step's logits memory.
  int32_t max_prompt_logits_tokens = 128;
  // > 0: while any sequence decodes, a step takes at most this many prompt tokens (all
  // prefill chunks together), so a long prompt prefills in slices and the decoding
  // sequences' inter-token latency stays near the time of such a step. 0: prefill chunks
  // take whatever the token budget leaves.
  int32_t max_prefill_tokens_with_decodes = 0;
  // > 0 (the engine sets it from the model: AttentionCostCrossover): that slice counts a
  // prompt token at position p as 1 + p / this many tokens -- its attention over the p
  // keys before it -- so a slice deep into a long prompt costs the decoding sequences no
  // more than one at its start. 0: every token counts 1.
  int64_t prefill_attention_crossover = 0;
  // Encoders (bidirectional attention): a prompt is admitted only when all of it fits the
  // step, never chunked. Prompts must then fit max_num_batched_tokens (the engine checks).
  bool whole_prompts_only = false;
};

// Tokens [start_position, start_position + num_tokens) of one sequence run this step.
// A decode may carry draft tokens (speculative decoding): its last num_draft_tokens
// tokens are seq->draft_token_ids, and every one of its rows gets logits.
struct ScheduledChunk {
  Sequence* seq = nullptr;
  int32_t start_position = 0;
  int32_t num_tokens = 0;  // draft tokens included
  bool sample = false;  // the chunk reaches the sequence's last token: sample its logits
  int32_t num_draft_tokens = 0;
};

// What the engine made of one chunk of the plan after the pass (Scheduler::Update).
struct ChunkResult {
  int32_t num_accepted_drafts = 0;  // leading draft tokens the sequence took as its own
  bool finished = false;            // the sequence ended this step: free its blocks
};

struct SchedulerOutput {
  std::vector<ScheduledChunk> chunks;  // decodes first, then prefill chunks
  int32_t num_batched_tokens = 0;
  int32_t num_preempted = 0;  // sequences preempted while making this plan
};

class Scheduler {
 public:
  // `kv` is borrowed and must outlive the scheduler. Null policy means FCFS.
  Scheduler(const SchedulerOptions& options, KvCacheManager& kv,
            std::unique_ptr<SchedulingPolicy> policy = nullptr);

  // Queues a new sequence (status kWaiting, nothing computed) behind the others.
  void AddWaiting(Sequence* seq);

  // Plans the next step (see scheduler.cc for the order) and advances each scheduled
  // sequence's num_computed_tokens by its chunk's tokens (draft tokens aside), so the
  // plan is what the next forward pass computes. The caller runs that pass, samples, and
  // calls Update before the next Schedule. The returned output is reused by the next call.
  const SchedulerOutput& Schedule();

  // After the pass of `plan` and the engine's sampling (results[i] for plan.chunks[i]):
  // the blocks the pass wrote become findable in the prefix cache; each sequence's
  // accepted draft tokens count as computed and the K/V of its rejected ones is rolled
  // back (blocks past them freed); finished sequences leave and free their blocks.
  // Draft tokens are cleared. Fork and Finish may come before it (they commit first).
  void Update(const SchedulerOutput& plan, std::span<const ChunkResult> results);

  // `parent` (running, its prompt just computed) hands its full prompt blocks to
  // `children` (kForkPending, each holding the prompt plus its first sampled token),
  // which join the running sequences and recompute the rest of the prompt themselves.
  void Fork(Sequence& parent, std::span<Sequence* const> children);

  // Removes a finished or cancelled sequence wherever it is and frees its blocks at once.
  void Finish(Sequence& seq);

  bool HasWork() const { return !running_.empty() || !waiting_.empty(); }
  int32_t num_running() const { return static_cast<int32_t>(running_.size()); }
  int32_t num_waiting() const { return static_cast<int32_t>(waiting_.size()); }
  int32_t num_seq_slots_used() const { return num_seq_slots_used_; }
  int64_t num_preemptions() const { return num_preemptions_; }
  const SchedulerOptions& options() const { return options_; }
  std::span<Sequence* const> running() const { return running_; }
  const std::deque<Sequence*>& waiting() const { return waiting_; }

  // For tests, between steps (after the engine appended the sampled tokens): statuses
  // agree with the queues, running sequences' blocks cover their computed tokens and
  // each has a token to compute, waiting ones hold no KV, the sequence cap holds, and
  // the KV cache manager's own invariants hold.
  Status CheckInvariants() const;

 private:
  void ScheduleRunning(bool decodes);
  // Admissions in policy order while the budgets, the blocks and the sequence cap allow,
  // taking at most `limit` tokens in all. `whole_prompts`: only prompts that complete in
  // this step, stopping at the first that would not.
  void ScheduleWaiting(int32_t limit, bool whole_prompts);
  // Gets blocks for `num_tokens` more of `seq`'s tokens, preempting victims chosen by the
  // policy until they fit. False when `seq` itself had to be preempted.
  bool ReserveForRunning(Sequence& seq, int32_t num_tokens);
  void Preempt(Sequence& seq);
  void AddChunk(Sequence& seq, int32_t num_tokens, bool prefill);
  // Adds as many of a scheduled decode's draft tokens as the budget and the free blocks
  // allow, without preempting anyone for them.
  void AddDrafts(ScheduledChunk& chunk);

  SchedulerOptions options_;
  KvCacheManager& kv_;
  std::unique_ptr<SchedulingPolicy> policy_;
  std::vector<Sequence*> running_;  // admission order
  std::deque<Sequence*> waiting_;   // arrival order; preempted ones at the front
  int32_t num_seq_slots_used_ = 0;  // sum of num_seq_slots over running_
  int64_t num_preemptions_ = 0;
  bool awaiting_update_ = false;  // Schedule ran, Update not yet
  int32_t budget_tokens_ = 0;  // left in the step being planned
  int32_t budget_prompt_logits_tokens_ = 0;  // of max_prompt_logits_tokens, left in the step
  // num_tokens, cut to the prompt-logits budget for a kPromptLogits sequence and, for a
  // prefill chunk, to the step's prefill budget.
  int32_t FitChunk(const Sequence& seq, int32_t num_tokens, bool prefill) const;
  // What `num_tokens` prompt tokens from position `start` count against the prefill
  // budget (prefill_attention_crossover).
  double PrefillCost(int32_t start, int32_t num_tokens) const;
  // The most of `num_tokens` from `start` that the prefill budget left allows; at least one
  // while nothing of it is spent, so that any prompt progresses.
  int32_t TokensWithinPrefillBudget(int32_t start, int32_t num_tokens) const;
  double budget_prefill_ = 0;  // of max_prefill_tokens_with_decodes, left in the step
  bool prefill_budget_spent_ = false;
  SchedulerOutput output_;
  std::vector<Sequence*> candidates_;  // running_ at the start of the step, reused
};

}  // namespace surge
