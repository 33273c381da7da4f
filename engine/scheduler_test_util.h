// The scheduler tests' harness: plays the engine without a model (append a made-up token
// to every sequence whose chunk reached its end, fork, finish at a target length), checks
// each plan and all invariants after every step, and keeps a step clock for arrivals.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "engine/scheduler.h"
#include "kv/kv_test_util.h"

namespace surge::testing_util {

class Harness {
 public:
  Harness(int32_t block_size, int32_t num_blocks, SchedulerOptions options,
          std::unique_ptr<SchedulingPolicy> policy = nullptr, bool prefix_caching = true)
      : kv_(TinyKvLayout(block_size), num_blocks, PrefixCacheOptions{.enabled = prefix_caching}),
        scheduler_(options, kv_, std::move(policy)) {}

  // Queues a request of `n` choices; returns choice 0. Choices > 0 fork after its prefill.
  // Prompt token t is t % 50 plus `first_token`: equal first tokens, shared prefixes.
  Sequence* Add(int32_t num_prompt_tokens, int32_t max_output_tokens, int32_t n = 1,
                int32_t priority = 0, int32_t first_token = 0) {
    Sequence* parent = nullptr;
    for (int32_t i = 0; i < n; ++i) {
      auto seq = std::make_unique<Sequence>();
      seq->id = next_id_++;
      for (int32_t t = 0; t < num_prompt_tokens; ++t) seq->token_ids.push_back(first_token + t % 50);
      seq->priority = priority;
      seq->arrival_time_s = now_s_;
      seq->num_prompt_tokens = num_prompt_tokens;
      seq->choice_index = i;
      seq->num_seq_slots = i == 0 ? n : 1;
      seq->status = i == 0 ? SequenceStatus::kWaiting : SequenceStatus::kForkPending;
      if (i == 0) parent = seq.get();
      max_output_[seq.get()] = max_output_tokens;
      children_[parent].push_back(seq.get());
      seqs_.push_back(std::move(seq));
    }
    children_[parent].erase(children_[parent].begin());  // the parent itself
    scheduler_.AddWaiting(parent);
    return parent;
  }

  // One engine step; checks the plan against the options and the block tables.
  const SchedulerOutput& Step() {
    const SchedulerOutput& out = scheduler_.Schedule();
    CheckPlan(out);
    for (const ScheduledChunk& chunk : out.chunks) {
      admitted_step_.emplace(chunk.seq, num_steps_);  // the first time only
      if (chunk.sample) Sample(*chunk.seq);
    }
    scheduler_.Update(out, std::vector<ChunkResult>(out.chunks.size()));
    ++num_steps_;
    now_s_ += step_seconds_;
    EXPECT_TRUE(scheduler_.CheckInvariants().ok()) << scheduler_.CheckInvariants().ToString();
    return out;
  }

  void Cancel(Sequence* parent) {
    scheduler_.Finish(*parent);
    for (Sequence* child : children_[parent]) scheduler_.Finish(*child);
  }

  bool AllFinished() const {
    return std::all_of(seqs_.begin(), seqs_.end(),
                       [](const auto& seq) { return seq->status == SequenceStatus::kFinished; });
  }

  KvCacheManager& kv() { return kv_; }
  // Steps run so far; each advances the arrival clock by `step_seconds`.
  int32_t num_steps() const { return num_steps_; }
  double now_s() const { return now_s_; }
  void set_step_seconds(double seconds) { step_seconds_ = seconds; }
  // The step in which `seq` was first scheduled, or -1.
  int32_t AdmittedStep(const Sequence* seq) const {
    auto it = admitted_step_.find(seq);
    return it == admitted_step_.end() ? -1 : it->second;
  }
  Scheduler& scheduler() { return scheduler_; }

 private:
  void CheckPlan(const SchedulerOutput& out) {
    const SchedulerOptions& options = scheduler_.options();
    int32_t num_tokens = 0;
    std::set<const Sequence*> seen;
    for (const ScheduledChunk& chunk : out.chunks) {
      EXPECT_TRUE(seen.insert(chunk.seq).second) << "sequence scheduled twice";
      EXPECT_EQ(chunk.seq->status, SequenceStatus::kRunning);
      EXPECT_GT(chunk.num_tokens, 0);
      EXPECT_EQ(chunk.start_position + chunk.num_tokens - chunk.num_draft_tokens,
                chunk.seq->num_computed_tokens);
      EXPECT_GE(kv_.BlockTable(chunk.seq->id).size() * kv_.block_size(),
                static_cast<size_t>(chunk.seq->num_computed_tokens));
      num_tokens += chunk.num_tokens;
    }
    EXPECT_EQ(num_tokens, out.num_batched_tokens);
    EXPECT_LE(num_tokens, options.max_num_batched_tokens);
    EXPECT_LE(scheduler_.num_running(), options.max_num_seqs);
  }

  // What the engine does with a chunk that reached the end: sample (here: a made-up
  // token), fork the other choices after the first token, finish at the target length.
  void Sample(Sequence& seq) {
    const bool first = seq.num_output_tokens() == 0;
    seq.token_ids.push_back(seq.num_tokens() % 50);
    if (first && children_.contains(&seq)) {
      std::vector<Sequence*> forked;
      for (Sequence* child : children_[&seq]) {
        child->token_ids.push_back(7);
        if (max_output_[child] > 1) {
          forked.push_back(child);
        } else {
          scheduler_.Finish(*child);
        }
      }
      scheduler_.Fork(seq, forked);
    }
    if (seq.num_output_tokens() >= max_output_[&seq]) scheduler_.Finish(seq);
  }

  KvCacheManager kv_;
  Scheduler scheduler_;
  SequenceId next_id_ = 0;
  std::deque<std::unique_ptr<Sequence>> seqs_;
  std::map<const Sequence*, int32_t> max_output_;
  std::map<const Sequence*, std::vector<Sequence*>> children_;  // parent -> choices > 0
  std::map<const Sequence*, int32_t> admitted_step_;
  int32_t num_steps_ = 0;
  double now_s_ = 0;
  double step_seconds_ = 0.01;
};

inline SchedulerOptions Options(int32_t max_num_seqs, int32_t max_num_batched_tokens) {
  return {max_num_seqs, max_num_batched_tokens};
}

}  // namespace surge::testing_util
