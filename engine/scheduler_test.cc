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

#include "engine/scheduler_test_util.h"

namespace surge {
namespace {

using testing_util::Harness;
using testing_util::Options;

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

// whole_prompts_only (encoders): a prompt that does not fit what the step has left waits
// for the next step instead of being chunked; without it, it takes the rest of the budget.
TEST(SchedulerTest, WholePromptsOnlyNeverChunks) {
  for (bool whole : {true, false}) {
    SchedulerOptions options = Options(8, 8);
    options.whole_prompts_only = whole;
    Harness h(4, 100, options);
    h.Add(5, 1);
    Sequence* b = h.Add(6, 1, 1, 0, /*first_token=*/100);  // no prefix shared with the first
    const SchedulerOutput& first = h.Step();
    ASSERT_EQ(first.chunks.size(), whole ? 1u : 2u) << whole;
    EXPECT_EQ(first.chunks[0].num_tokens, 5);
    if (!whole) continue;
    const SchedulerOutput& second = h.Step();
    const auto chunk = std::find_if(second.chunks.begin(), second.chunks.end(),
                                    [&](const ScheduledChunk& c) { return c.seq == b; });
    ASSERT_NE(chunk, second.chunks.end());
    EXPECT_EQ(chunk->num_tokens, 6);  // all of it, in one chunk
    EXPECT_TRUE(chunk->sample);
  }
}

// max_prefill_tokens_with_decodes: a long prompt takes slices of 5 tokens while another
// sequence decodes, and the whole budget once nothing else runs.
TEST(SchedulerTest, PrefillIsSlicedOnlyWhileOthersDecode) {
  SchedulerOptions options = Options(8, 32);
  options.max_prefill_tokens_with_decodes = 5;
  Harness h(4, 100, options);
  Sequence* a = h.Add(3, 4);
  h.Step();  // a's prompt alone: no decode in this step, no slicing
  Sequence* b = h.Add(40, 2);
  std::vector<int32_t> slices;
  while (a->status == SequenceStatus::kRunning) {
    const SchedulerOutput& out = h.Step();
    ASSERT_EQ(out.chunks.front().seq, a);
    if (out.chunks.size() == 2) slices.push_back(out.chunks[1].num_tokens);
  }
  EXPECT_EQ(slices, (std::vector<int32_t>{5, 5, 5}));  // a decodes three more tokens, then finishes
  const SchedulerOutput& alone = h.Step();
  ASSERT_EQ(alone.chunks.size(), 1u);
  EXPECT_EQ(alone.chunks[0].seq, b);
  EXPECT_EQ(alone.chunks[0].num_tokens, 40 - 15);  // the rest in one pass
}

// With prefill_attention_crossover C, a slice among decodes counts a token at position p
// as 1 + p / C: slices shrink as the prompt's context grows (never below one token), so
// each costs the decoder about what the first did.
TEST(SchedulerTest, PrefillSlicesShrinkWithTheirContext) {
  SchedulerOptions options = Options(8, 64);
  options.max_prefill_tokens_with_decodes = 8;
  options.prefill_attention_crossover = 8;
  Harness h(4, 400, options);
  Sequence* a = h.Add(3, 200);
  h.Step();
  h.Add(60, 2, 1, 0, /*first_token=*/100);
  std::vector<int32_t> slices;
  for (int step = 0; step < 12; ++step) {
    const SchedulerOutput& out = h.Step();
    ASSERT_EQ(out.chunks.front().seq, a);
    if (out.chunks.size() == 2) slices.push_back(out.chunks[1].num_tokens);
  }
  // From position 0: n + n(n-1)/16 <= 8 gives 6; from 6: n + (6n + n(n-1)/2)/8 <= 8 gives
  // 4; then 3 (from 10), 2 (13, 15, ..., while 2 + (2p + 1)/8 <= 8), and 1 from p = 24 on.
  ASSERT_GE(slices.size(), 8u);
  EXPECT_EQ(std::vector<int32_t>(slices.begin(), slices.begin() + 3), (std::vector<int32_t>{6, 4, 3}));
  EXPECT_TRUE(std::is_sorted(slices.rbegin(), slices.rend())) << "slices never grow with the context";
  EXPECT_GE(slices.back(), 1);
}

// A short prompt that arrives while a long one prefills is admitted at once, within half
// of the step's budget (the long one keeps the rest), instead of waiting for the long
// prefill to end; a long newcomer still waits its turn.
TEST(SchedulerTest, ShortPromptsDoNotWaitBehindALongPrefill) {
  Harness h(4, 100, Options(8, 16));
  Sequence* a = h.Add(60, 2);
  h.Step();  // a takes the whole budget: 16 of its 60 tokens
  Sequence* b = h.Add(5, 2, 1, 0, /*first_token=*/100);  // no prefix shared with a
  Sequence* c = h.Add(40, 2, 1, 0, /*first_token=*/200);
  const SchedulerOutput& out = h.Step();
  ASSERT_EQ(out.chunks.size(), 2u);
  EXPECT_EQ(out.chunks[0].seq, b);  // admitted ahead of a's next chunk
  EXPECT_EQ(out.chunks[0].num_tokens, 5);
  EXPECT_EQ(out.chunks[1].seq, a);
  EXPECT_EQ(out.chunks[1].num_tokens, 11);
  EXPECT_EQ(c->status, SequenceStatus::kWaiting);  // 40 tokens do not fit in half of 16
  // While b decodes, a's slices: 15 a step, then c's admission waits until a's prefill is done.
  while (a->num_pending_tokens() > 1) {
    EXPECT_EQ(c->status, SequenceStatus::kWaiting);
    h.Step();
  }
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
