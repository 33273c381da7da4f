#include "engine/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>

#include "base/check.h"

namespace surge {

Scheduler::Scheduler(const SchedulerOptions& options, KvCacheManager& kv,
                     std::unique_ptr<SchedulingPolicy> policy)
    : options_(options),
      kv_(kv),
      policy_(policy ? std::move(policy) : std::make_unique<FcfsPolicy>()) {
  CHECK_GT(options_.max_num_seqs, 0);
  CHECK_GT(options_.max_num_batched_tokens, 0);
  running_.reserve(options_.max_num_seqs);
  candidates_.reserve(options_.max_num_seqs);
  output_.chunks.reserve(options_.max_num_seqs);
}

void Scheduler::AddWaiting(Sequence* seq) {
  CHECK(seq->status == SequenceStatus::kWaiting && seq->num_computed_tokens == 0 &&
        seq->num_tokens() > 0 && !kv_.Contains(seq->id))
      << "sequence " << seq->id << " is not a new one";
  waiting_.push_back(seq);
}

// A step's plan, in order:
//   1. every running decode, one token each, oldest first, so that generation never
//      stalls behind a long prompt;
//   2. while a running sequence is still prefilling: new admissions in policy order whose
//      whole prompt fits in half of the prefill budget left, so that a short prompt never
//      waits behind a long one's prefill (which keeps at least the other half);
//   3. the next chunk of every running sequence still prefilling, oldest first;
//   4. new admissions in policy order, each with as much of its prompt as the budget
//      allows (chunked prefill), while the blocks for that chunk can be had and the
//      sequence cap allows.
// 2 and 4 are skipped when this step already had to preempt: admitting now would only
// take back the blocks just freed for the running ones (as vLLM v1).
// A running sequence that cannot get blocks preempts others (possibly itself); a waiting
// one simply waits. The oldest running sequence is never a victim while a newer one
// exists, so it always progresses, and any request that fits the pool alone completes.
const SchedulerOutput& Scheduler::Schedule() {
  CHECK(!awaiting_update_) << "Schedule before the previous plan's Update";
  awaiting_update_ = true;
  kv_.ReleaseIdleBlocks();
  output_.chunks.clear();
  output_.num_batched_tokens = 0;
  output_.num_preempted = 0;
  budget_tokens_ = options_.max_num_batched_tokens;
  budget_prompt_logits_tokens_ = options_.max_prompt_logits_tokens;
  candidates_.assign(running_.begin(), running_.end());
  ScheduleRunning(/*decodes=*/true);
  const bool decoding = !output_.chunks.empty();
  budget_prefill_ = decoding && options_.max_prefill_tokens_with_decodes > 0
                        ? options_.max_prefill_tokens_with_decodes
                        : std::numeric_limits<double>::infinity();
  prefill_budget_spent_ = false;
  const bool prefilling = std::any_of(candidates_.begin(), candidates_.end(), [](const Sequence* seq) {
    return seq->status == SequenceStatus::kRunning && seq->num_pending_tokens() > 1;
  });
  if (prefilling && output_.num_preempted == 0) {
    ScheduleWaiting(static_cast<int32_t>(std::min<double>(budget_tokens_, budget_prefill_) / 2), /*whole_prompts=*/true);
  }
  ScheduleRunning(/*decodes=*/false);
  if (output_.num_preempted == 0) {
    ScheduleWaiting(std::numeric_limits<int32_t>::max(), /*whole_prompts=*/options_.whole_prompts_only);
  }
  // Drafts last: they take only what the real tokens left of the budget and the pool.
  for (ScheduledChunk& chunk : output_.chunks) AddDrafts(chunk);
  for (ScheduledChunk& chunk : output_.chunks) {
    Sequence& seq = *chunk.seq;
    seq.num_computed_tokens += chunk.num_tokens - chunk.num_draft_tokens;
    chunk.sample = seq.num_computed_tokens == seq.num_tokens();
    output_.num_batched_tokens += chunk.num_tokens;
  }
  return output_;
}

void Scheduler::ScheduleRunning(bool decodes) {
  for (Sequence* seq : candidates_) {
    if (budget_tokens_ == 0) return;
    if (seq->status != SequenceStatus::kRunning) continue;  // preempted during this step
    const int32_t num_pending = seq->num_pending_tokens();
    DCHECK(num_pending >= 1);
    if ((num_pending == 1) != decodes) continue;
    const int32_t num_tokens = FitChunk(*seq, std::min(num_pending, budget_tokens_), !decodes);
    if (num_tokens == 0) continue;
    if (ReserveForRunning(*seq, num_tokens)) AddChunk(*seq, num_tokens, !decodes);
  }
}

void Scheduler::ScheduleWaiting(int32_t limit, bool whole_prompts) {
  while (budget_tokens_ > 0 && limit > 0 && !waiting_.empty()) {
    const size_t index = policy_->PickNextWaiting(waiting_);
    Sequence& seq = *waiting_[index];
    if (num_seq_slots_used_ + seq.num_seq_slots > options_.max_num_seqs) return;
    const int32_t max_tokens = FitChunk(seq, std::min(budget_tokens_, limit), /*prefill=*/true);
    if (max_tokens == 0) return;
    if (whole_prompts && seq.num_tokens() > max_tokens) return;  // (prefix-cache hits not counted)
    // One prefix-cache lookup: the cached blocks are attached, the rest is allocated.
    // Embeddings pool hidden states the cache does not keep: they compute every token.
    const std::optional<int32_t> num_cached = kv_.AllocatePrompt(
        seq.id, seq.token_ids, max_tokens, seq.output == SequenceOutput::kTokens);
    if (!num_cached) return;
    const int32_t num_tokens = std::min(seq.num_tokens() - *num_cached, max_tokens);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(index));
    if (seq.num_preemptions == 0) seq.num_cached_tokens = *num_cached;
    seq.num_computed_tokens = *num_cached;
    seq.status = SequenceStatus::kRunning;
    running_.push_back(&seq);
    num_seq_slots_used_ += seq.num_seq_slots;
    AddChunk(seq, num_tokens, /*prefill=*/true);
    limit -= num_tokens;
  }
}

bool Scheduler::ReserveForRunning(Sequence& seq, int32_t num_tokens) {
  while (!kv_.Allocate(seq.id, seq.token_ids, seq.num_computed_tokens + num_tokens)) {
    Sequence& victim = *running_[policy_->PickVictim(running_)];
    Preempt(victim);
    if (&victim == &seq) return false;
  }
  return true;
}

// Preemption by recompute: the victim loses its blocks and goes back to the front of the
// queue; when admitted again it prefills prompt + generated tokens and then continues.
void Scheduler::Preempt(Sequence& seq) {
  std::erase_if(output_.chunks, [&](const ScheduledChunk& chunk) {
    if (chunk.seq != &seq) return false;
    budget_tokens_ += chunk.num_tokens;  // planned earlier in this step: give its tokens back
    return true;
  });
  kv_.Free(seq.id);
  std::erase(running_, &seq);
  num_seq_slots_used_ -= seq.num_seq_slots;
  seq.num_computed_tokens = 0;
  seq.status = SequenceStatus::kWaiting;
  ++seq.num_preemptions;
  waiting_.push_front(&seq);
  ++num_preemptions_;
  ++output_.num_preempted;
}

void Scheduler::AddChunk(Sequence& seq, int32_t num_tokens, bool prefill) {
  output_.chunks.push_back({&seq, seq.num_computed_tokens, num_tokens, false});
  budget_tokens_ -= num_tokens;
  if (prefill) {
    budget_prefill_ -= PrefillCost(seq.num_computed_tokens, num_tokens);
    prefill_budget_spent_ = true;
  }
  if (seq.output == SequenceOutput::kPromptLogits) budget_prompt_logits_tokens_ -= num_tokens;
}

void Scheduler::AddDrafts(ScheduledChunk& chunk) {
  Sequence& seq = *chunk.seq;
  if (seq.draft_token_ids.empty() || seq.num_pending_tokens() != 1 || budget_tokens_ == 0) return;
  const int32_t num_drafts = std::min(static_cast<int32_t>(seq.draft_token_ids.size()), budget_tokens_);
  if (!kv_.Allocate(seq.id, seq.token_ids, seq.num_computed_tokens + 1 + num_drafts)) return;
  chunk.num_tokens += num_drafts;
  chunk.num_draft_tokens = num_drafts;
  budget_tokens_ -= num_drafts;
}

void Scheduler::Update(const SchedulerOutput& plan, std::span<const ChunkResult> results) {
  CHECK(awaiting_update_) << "Update without a Schedule";
  CHECK_EQ(plan.chunks.size(), results.size());
  awaiting_update_ = false;
  kv_.CommitComputed();  // the pass has run: the blocks it wrote may be reused
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& chunk = plan.chunks[i];
    Sequence& seq = *chunk.seq;
    seq.draft_token_ids.clear();
    if (seq.status != SequenceStatus::kRunning) continue;  // finished during sampling
    if (results[i].finished) {
      Finish(seq);
      continue;
    }
    if (chunk.num_draft_tokens == 0) continue;
    CHECK_LE(results[i].num_accepted_drafts, chunk.num_draft_tokens);
    seq.num_computed_tokens += results[i].num_accepted_drafts;
    CHECK_EQ(seq.num_pending_tokens(), 1) << "sequence " << seq.id << " after verification";
    kv_.Truncate(seq.id, seq.num_computed_tokens);
  }
}

double Scheduler::PrefillCost(int32_t start, int32_t num_tokens) const {
  const double n = num_tokens;
  if (options_.prefill_attention_crossover <= 0) return n;
  return n + (n * start + n * (n - 1) / 2) / static_cast<double>(options_.prefill_attention_crossover);
}

int32_t Scheduler::TokensWithinPrefillBudget(int32_t start, int32_t num_tokens) const {
  if (std::isinf(budget_prefill_) || PrefillCost(start, num_tokens) <= budget_prefill_) return num_tokens;
  int32_t low = 0, high = num_tokens;  // PrefillCost(start, low) fits, high does not
  while (high - low > 1) {
    const int32_t mid = low + (high - low) / 2;
    (PrefillCost(start, mid) <= budget_prefill_ ? low : high) = mid;
  }
  return low == 0 && !prefill_budget_spent_ ? std::min(num_tokens, 1) : low;
}

int32_t Scheduler::FitChunk(const Sequence& seq, int32_t num_tokens, bool prefill) const {
  if (prefill) num_tokens = TokensWithinPrefillBudget(seq.num_computed_tokens, num_tokens);
  if (seq.output != SequenceOutput::kPromptLogits) return num_tokens;
  return std::min(num_tokens, budget_prompt_logits_tokens_);
}

void Scheduler::Fork(Sequence& parent, std::span<Sequence* const> children) {
  kv_.CommitComputed();  // the parent's prompt blocks were just written
  CHECK(parent.status == SequenceStatus::kRunning &&
        parent.num_computed_tokens == parent.num_prompt_tokens)
      << "fork of sequence " << parent.id << " before its prompt is computed";
  CHECK_LT(static_cast<int32_t>(children.size()), parent.num_seq_slots);
  for (Sequence* child : children) {
    CHECK(child->status == SequenceStatus::kForkPending);
    child->num_computed_tokens = kv_.Fork(parent.id, child->id, parent.num_prompt_tokens);
    child->status = SequenceStatus::kRunning;
    child->num_seq_slots = 1;
    running_.push_back(child);
  }
  // The parent's reservation becomes the children's slots; unused ones are released.
  num_seq_slots_used_ -= parent.num_seq_slots - 1 - static_cast<int32_t>(children.size());
  parent.num_seq_slots = 1;
}

void Scheduler::Finish(Sequence& seq) {
  kv_.CommitComputed();  // a finished sequence's last blocks were written: cache them
  if (seq.status == SequenceStatus::kRunning) {
    std::erase(running_, &seq);
    num_seq_slots_used_ -= seq.num_seq_slots;
    kv_.Free(seq.id);
  } else if (seq.status == SequenceStatus::kWaiting) {
    std::erase(waiting_, &seq);
  }
  seq.status = SequenceStatus::kFinished;
}

Status Scheduler::CheckInvariants() const {
  std::unordered_set<const Sequence*> seen;
  int32_t num_slots = 0;
  for (const Sequence* seq : running_) {
    const std::string name = "running sequence " + std::to_string(seq->id);
    if (!seen.insert(seq).second) return InternalError(name + " is queued twice");
    if (seq->status != SequenceStatus::kRunning) return InternalError(name + " has wrong status");
    const int64_t num_covered = int64_t{kv_.block_size()} * kv_.BlockTable(seq->id).size();
    if (num_covered < seq->num_computed_tokens) {
      return InternalError(name + ": its blocks do not cover its computed tokens");
    }
    if (seq->num_pending_tokens() < 1) return InternalError(name + " has nothing to compute");
    RETURN_IF_ERROR(kv_.CheckTokens(seq->id, seq->token_ids));
    num_slots += seq->num_seq_slots;
  }
  for (const Sequence* seq : waiting_) {
    const std::string name = "waiting sequence " + std::to_string(seq->id);
    if (!seen.insert(seq).second) return InternalError(name + " is queued twice");
    if (seq->status != SequenceStatus::kWaiting) return InternalError(name + " has wrong status");
    if (seq->num_computed_tokens != 0 || kv_.Contains(seq->id)) {
      return InternalError(name + " holds KV");
    }
  }
  if (num_slots != num_seq_slots_used_ || num_slots > options_.max_num_seqs) {
    return InternalError("running sequences take " + std::to_string(num_slots) +
                         " slots, counted " + std::to_string(num_seq_slots_used_) +
                         ", max_num_seqs " + std::to_string(options_.max_num_seqs));
  }
  if (kv_.num_sequences() != num_running()) {
    return InternalError("the KV cache holds sequences that are not running");
  }
  return kv_.CheckInvariants();
}

}  // namespace surge
