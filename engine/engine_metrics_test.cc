// What the engine publishes for /metrics about its steps (batch sizes per step, KV bytes)
// and request deadlines (EngineRequest::timeout_s) on the engine's own clock: a request
// past its deadline ends with DeadlineExceeded, waiting or running, and frees its blocks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using testing_util::RequestResult;
using testing_util::StoriesEngineTest;

class EngineMetricsTest : public StoriesEngineTest {};

TEST(StepSizeHistogramTest, PowerOfTwoBucketsAreInclusive) {
  StepSizeHistogram histogram;
  for (int64_t value : {0, 1, 2, 3, 4, 5, 16384, 16385, 100000}) histogram.Observe(value);
  std::array<uint64_t, StepSizeHistogram::kNumBounds + 1> want{};
  want[0] = 2;   // 0, 1
  want[1] = 1;   // 2
  want[2] = 2;   // 3, 4
  want[3] = 1;   // 5
  want[14] = 1;  // 16384
  want[15] = 2;  // past the last bound
  EXPECT_EQ(histogram.bucket_counts, want);
  EXPECT_EQ(histogram.sum, 0 + 1 + 2 + 3 + 4 + 5 + 16384 + 16385 + 100000);
  EXPECT_EQ(StepSizeHistogram::UpperBounds()[14], 16384);
}

// Two requests admitted together: one prefill step of both prompts (4 + 7 tokens), then
// three decode steps of two sequences (the 4th token is sampled, never fed back).
TEST_F(EngineMetricsTest, StepSizesAfterAKnownSequenceOfSteps) {
  auto engine = StartEngine({}, /*start=*/false);
  auto first = engine->Submit(Greedy({1, 403, 407, 261}, 4, true), nullptr);
  auto second = engine->Submit(Greedy({1, 320, 431, 295, 270, 330, 267}, 4, true), nullptr);
  ASSERT_TRUE(first.ok() && second.ok());
  engine->Start();
  testing_util::Drain(**first);
  testing_util::Drain(**second);
  const EngineStats stats = engine->Stats();
  EXPECT_EQ(stats.num_steps, 4);
  std::array<uint64_t, StepSizeHistogram::kNumBounds + 1> sequences{};
  sequences[1] = 4;  // every step: 2 sequences
  EXPECT_EQ(stats.step_sequences.bucket_counts, sequences);
  EXPECT_EQ(stats.step_sequences.sum, 8);
  std::array<uint64_t, StepSizeHistogram::kNumBounds + 1> tokens{};
  tokens[1] = 3;  // the decodes: 2 tokens
  tokens[4] = 1;  // the prefill: 11 tokens, in (8, 16]
  EXPECT_EQ(stats.step_tokens.bucket_counts, tokens);
  EXPECT_EQ(stats.step_tokens.sum, 11 + 3 * 2);
  ExpectNoLeaks(*engine);
}

class EngineDeadlineTest : public EngineMetricsTest {
 protected:
  EngineOptions ClockedOptions() {
    EngineOptions options;
    options.clock = [this] { return now_s_.load(); };
    options.max_num_batched_tokens = 8;  // a slow prefill
    return options;
  }
  std::atomic<double> now_s_{100};
};

// The deadline passes while the request runs: it ends at the next step with an error
// naming its timeout, its blocks free; a request without one runs on untouched.
TEST_F(EngineDeadlineTest, RunningRequestEndsAtItsDeadline) {
  auto engine = StartEngine(ClockedOptions());
  EngineRequest timed = Greedy(tokenizer_->Encode("Once upon a time, there was a girl"), 400, true);
  timed.timeout_s = 5;
  auto stream = engine->Submit(timed, nullptr);
  ASSERT_TRUE(stream.ok());
  auto untimed = engine->Submit(Greedy({1, 403, 407}, 30, true), nullptr);
  ASSERT_TRUE(untimed.ok());
  RequestOutput first = (*stream)->Wait();
  ASSERT_FALSE(first.finished);
  now_s_ = 105.5;
  RequestResult rest = testing_util::Drain(**stream);
  EXPECT_EQ(rest.error.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(rest.error.message(), HasSubstr("deadline passed (5 s after"));
  EXPECT_LT(rest.num_completion_tokens, 400);
  RequestResult other = testing_util::Drain(**untimed);
  EXPECT_TRUE(other.error.ok());
  EXPECT_EQ(other.choices.at(0).token_ids.size(), 30u);
  ExpectNoLeaks(*engine);
}

// A request still waiting when its deadline passes ends before it is ever scheduled.
TEST_F(EngineDeadlineTest, WaitingRequestEndsBeforeItRuns) {
  auto engine = StartEngine(ClockedOptions(), /*start=*/false);
  EngineRequest timed = Greedy({1, 403, 407, 261}, 10, true);
  timed.timeout_s = 0.5;
  auto stream = engine->Submit(timed, nullptr);
  ASSERT_TRUE(stream.ok());
  now_s_ = 101;
  engine->Start();
  RequestResult result = testing_util::Drain(**stream);
  EXPECT_EQ(result.error.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(result.num_completion_tokens, 0);
  EXPECT_EQ(engine->Stats().num_steps, 0);
  ExpectNoLeaks(*engine);
}

// A request that finishes first leaves its stale deadline behind, which does nothing.
TEST_F(EngineDeadlineTest, FinishedRequestIgnoresItsDeadline) {
  auto engine = StartEngine(ClockedOptions());
  EngineRequest timed = Greedy({1, 403, 407, 261}, 3, true);
  timed.timeout_s = 1;
  RequestResult done = Run(*engine, timed);
  EXPECT_TRUE(done.error.ok());
  now_s_ = 200;
  RequestResult next = Run(*engine, Greedy({1, 403}, 3, true));
  EXPECT_TRUE(next.error.ok());
  EXPECT_EQ(next.choices.at(0).token_ids.size(), 3u);
  ExpectNoLeaks(*engine);
}

}  // namespace
}  // namespace surge
