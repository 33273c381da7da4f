// Scheduler tests without a model: a harness plays the engine (append a token to every
// sequence whose chunk reached its end, finish at a target length) and checks the plan
// and all invariants after every step.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>

namespace surge {
namespace {

KvLayout Layout(int32_t block_size) {
  KvLayout layout;
  layout.num_layers = 1;
  layout.num_kv_heads = 1;
  layout.head_dim = 4;
  layout.block_size = block_size;
  return layout;
}

class Harness {
 public:
  Harness(int32_t block_size, int32_t num_blocks, SchedulerOptions options,
          std::unique_ptr<SchedulingPolicy> policy = nullptr)
      : kv_(Layout(block_size), num_blocks), scheduler_(options, kv_, std::move(policy)) {}

  // Queues a request of `n` choices; returns choice 0. Choices > 0 fork after its prefill.
  Sequence* Add(int32_t num_prompt_tokens, int32_t max_output_tokens, int32_t n = 1) {
    Sequence* parent = nullptr;
    for (int32_t i = 0; i < n; ++i) {
      auto seq = std::make_unique<Sequence>();
      seq->id = next_id_++;
      for (int32_t t = 0; t < num_prompt_tokens; ++t) seq->token_ids.push_back(t % 50);
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
      if (chunk.sample) Sample(*chunk.seq);
    }
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
      EXPECT_EQ(chunk.start_position + chunk.num_tokens, chunk.seq->num_computed_tokens);
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
};

SchedulerOptions Options(int32_t max_num_seqs, int32_t max_num_batched_tokens) {
  return {max_num_seqs, max_num_batched_tokens};
}

TEST(SchedulerTest, DecodesFirstThenPrefillChunksWithinTheBudget) {
  Harness h(4, 100, Options(8, 8));
  Sequence* a = h.Add(3, 10);
  const SchedulerOutput& first = h.Step();
  ASSERT_EQ(first.chunks.size(), 1u);
  EXPECT_TRUE(first.chunks[0].sample);
  Sequence* b = h.Add(20, 10);
  for (int32_t chunk : {7, 7, 6}) {
    const SchedulerOutput& out = h.Step();
    ASSERT_EQ(out.chunks.size(), 2u);
    EXPECT_EQ(out.chunks[0].seq, a);  // the decode comes first, every step
    EXPECT_EQ(out.chunks[0].num_tokens, 1);
    EXPECT_EQ(out.chunks[1].seq, b);
    EXPECT_EQ(out.chunks[1].num_tokens, chunk);
    EXPECT_EQ(out.chunks[1].sample, chunk == 6);
  }
  EXPECT_EQ(b->num_output_tokens(), 1);
  EXPECT_EQ(h.scheduler().num_preemptions(), 0);
}

TEST(SchedulerTest, RespectsMaxNumSeqsAndAdmitsInArrivalOrder) {
  Harness h(4, 100, Options(2, 64));
  Sequence* a = h.Add(5, 2);
  Sequence* b = h.Add(5, 2);
  Sequence* c = h.Add(5, 2);
  h.Step();
  EXPECT_EQ(a->status, SequenceStatus::kRunning);
  EXPECT_EQ(b->status, SequenceStatus::kRunning);
  EXPECT_EQ(c->status, SequenceStatus::kWaiting);
  h.Step();  // a and b finish
  EXPECT_EQ(c->status, SequenceStatus::kWaiting);
  h.Step();
  EXPECT_EQ(c->status, SequenceStatus::kRunning);
}

TEST(SchedulerTest, ForkReservesSlotsForAllChoices) {
  Harness h(4, 100, Options(3, 64));
  Sequence* parent = h.Add(6, 5, /*n=*/3);
  Sequence* other = h.Add(2, 5);
  h.Step();  // the parent takes all three slots; the other request must wait
  EXPECT_EQ(other->status, SequenceStatus::kWaiting);
  EXPECT_EQ(h.scheduler().num_running(), 3);  // forked after the first token
  EXPECT_EQ(h.kv().num_used_blocks(), 2);     // the children share the full prompt block
  (void)parent;
}

TEST(SchedulerTest, PreemptsTheMostRecentlyAdmittedAndKeepsItsOutput) {
  Harness h(4, 6, Options(8, 64));
  Sequence* a = h.Add(8, 20);
  Sequence* b = h.Add(8, 20);
  Sequence* c = h.Add(8, 20);
  h.Step();  // all three prompts: 6 blocks, the whole pool
  EXPECT_EQ(h.kv().num_free_blocks(), 0);
  const SchedulerOutput& out = h.Step();  // every decode needs a new block
  EXPECT_EQ(out.num_preempted, 1);
  EXPECT_EQ(h.scheduler().num_preemptions(), 1);
  EXPECT_EQ(a->status, SequenceStatus::kRunning);
  EXPECT_EQ(b->status, SequenceStatus::kRunning);
  EXPECT_EQ(c->status, SequenceStatus::kWaiting);
  EXPECT_EQ(c->num_computed_tokens, 0);
  EXPECT_EQ(c->num_tokens(), 9);  // its sampled token is kept, to be recomputed
  EXPECT_EQ(h.scheduler().waiting().front(), c);
}

// A policy whose victim may already be planned: the oldest running sequence.
class OldestVictimPolicy : public FcfsPolicy {
 public:
  size_t PickVictim(std::span<Sequence* const> running) const override { return 0; }
};

TEST(SchedulerTest, VictimPlannedEarlierInTheStepGivesBackItsTokens) {
  Harness h(4, 3, Options(8, 8), std::make_unique<OldestVictimPolicy>());
  Sequence* a = h.Add(4, 4);
  Sequence* b = h.Add(4, 4);
  h.Step();  // both prompts, one block each
  // a's decode gets the last free block; b's then needs one, and the policy preempts a,
  // whose planned token goes back to the budget.
  const SchedulerOutput& out = h.Step();
  ASSERT_EQ(out.chunks.size(), 1u);
  EXPECT_EQ(out.chunks[0].seq, b);
  EXPECT_EQ(out.num_batched_tokens, 1);
  EXPECT_EQ(out.num_preempted, 1);
  EXPECT_EQ(a->status, SequenceStatus::kWaiting);
  EXPECT_EQ(h.kv().num_used_blocks(), 2);
}

TEST(SchedulerTest, RequestsThatEachFillThePoolAloneAllComplete) {
  Harness h(4, 10, Options(8, 16));
  for (int i = 0; i < 5; ++i) h.Add(20, 21);  // 40 positions: the whole pool, each
  int steps = 0;
  while (!h.AllFinished() && steps < 1000) {
    h.Step();
    ++steps;
    ASSERT_FALSE(testing::Test::HasFailure()) << "step " << steps;
  }
  EXPECT_TRUE(h.AllFinished());
  EXPECT_GT(h.scheduler().num_preemptions(), 0);
  EXPECT_EQ(h.kv().num_free_blocks(), 10);
}

TEST(SchedulerTest, CancelFreesBlocksWhereverTheSequenceIs) {
  Harness h(4, 10, Options(1, 64));
  Sequence* a = h.Add(10, 50);
  Sequence* b = h.Add(10, 50, /*n=*/2);
  h.Step();
  EXPECT_EQ(h.kv().num_used_blocks(), 3);
  h.Cancel(b);  // waiting, with a fork pending
  h.Cancel(a);  // running
  EXPECT_EQ(h.kv().num_free_blocks(), 10);
  EXPECT_FALSE(h.scheduler().HasWork());
  EXPECT_TRUE(h.AllFinished());
}

// Random arrivals, lengths, choices and cancellations under tight pools and budgets:
// invariants hold after every step, every request completes, nothing leaks.
TEST(SchedulerTest, RandomScenariosKeepInvariantsAndComplete) {
  struct Config {
    int32_t block_size, num_blocks, max_num_seqs, max_num_batched_tokens;
  };
  int64_t total_preemptions = 0;
  for (const Config& config : {Config{4, 12, 8, 16}, Config{16, 20, 64, 64}, Config{4, 64, 4, 7},
                               Config{8, 30, 32, 512}}) {
    SCOPED_TRACE(config.num_blocks);
    std::mt19937 rng(config.num_blocks);
    Harness h(config.block_size, config.num_blocks,
              Options(config.max_num_seqs, config.max_num_batched_tokens));
    const int32_t max_tokens_alone = config.block_size * config.num_blocks;
    std::vector<Sequence*> requests;
    for (int step = 0; step < 4000 && (step < 300 || !h.AllFinished()); ++step) {
      if (step < 300 && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        const int32_t num_prompt =
            std::uniform_int_distribution<int32_t>(1, max_tokens_alone / 2)(rng);
        const int32_t num_output = std::uniform_int_distribution<int32_t>(
            1, std::min(40, max_tokens_alone - num_prompt + 1))(rng);
        const int32_t n = std::uniform_int_distribution<int32_t>(0, 5)(rng) == 0 ? 3 : 1;
        requests.push_back(h.Add(num_prompt, num_output, std::min(n, config.max_num_seqs)));
      }
      if (!requests.empty() && std::uniform_int_distribution<int>(0, 40)(rng) == 0) {
        h.Cancel(requests[std::uniform_int_distribution<size_t>(0, requests.size() - 1)(rng)]);
      }
      h.Step();
      ASSERT_FALSE(testing::Test::HasFailure()) << "step " << step;
    }
    EXPECT_TRUE(h.AllFinished());
    EXPECT_EQ(h.kv().num_free_blocks(), config.num_blocks);
    total_preemptions += h.scheduler().num_preemptions();
  }
  EXPECT_GT(total_preemptions, 0);
}

}  // namespace
}  // namespace surge
