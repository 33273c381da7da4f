// BorrowPolicy: borrowing engages under a scripted overload and gives back after recovery,
// with hysteresis (no flapping), per-tier pool orders and the needs-capacity signal.
#include "router/tiers/borrow_policy.h"

#include <gtest/gtest.h>

#include "router/tiers/test_clock.h"

namespace surge::router {
namespace {

using Pools = std::vector<std::string>;

class BorrowPolicyTest : public ::testing::Test {
 protected:
  BorrowPolicyTest() : window_(WindowOptions()) {}

  TtftWindowOptions WindowOptions() {
    TtftWindowOptions options;
    options.window_ms = 10000;
    options.now_ms = clock_.Fn();
    return options;
  }
  static BorrowPolicyOptions PolicyOptions() {
    BorrowPolicyOptions options;
    options.min_samples = 20;
    options.hold_ms = 5000;
    options.eval_interval_ms = 0;  // every call evaluates: the tests step time themselves
    return options;
  }
  // `count` requests of `tier`, one each `every_ms`, all with this TTFT.
  void Traffic(Tier tier, int count, double ttft_ms, int64_t every_ms = 100) {
    for (int i = 0; i < count; ++i) {
      window_.Add(tier, ttft_ms);
      clock_.Advance(every_ms);
    }
  }

  VirtualClock clock_;
  TtftWindow window_;
};

TEST_F(BorrowPolicyTest, OwnPoolsWhenHealthy) {
  BorrowPolicy policy(PolicyOptions(), &window_);
  Traffic(Tier::kRealtime, 50, 500);
  EXPECT_EQ(policy.PoolsFor(Tier::kRealtime), Pools({"P1"}));
  EXPECT_EQ(policy.PoolsFor(Tier::kNormal), Pools({"P2"}));
  EXPECT_EQ(policy.PoolsFor(Tier::kBatch), Pools({"P3"}));
  EXPECT_FALSE(policy.NeedsCapacity(Tier::kRealtime));
  EXPECT_FALSE(policy.NeedsCapacity("P1"));
}

// A scripted overload: realtime's TTFT jumps to 3 s (threshold 2 s). Borrowing starts once
// the window holds enough evidence, and ends only after the window recovered and held.
TEST_F(BorrowPolicyTest, BorrowsUnderOverloadAndGivesBackAfterRecovery) {
  BorrowPolicy policy(PolicyOptions(), &window_);
  Traffic(Tier::kRealtime, 19, 3000);
  EXPECT_FALSE(policy.NeedsCapacity(Tier::kRealtime));  // 19 < min_samples
  Traffic(Tier::kRealtime, 1, 3000);
  EXPECT_EQ(policy.PoolsFor(Tier::kRealtime), Pools({"P1", "P2", "P3"}));
  EXPECT_TRUE(policy.NeedsCapacity(Tier::kRealtime));
  EXPECT_TRUE(policy.NeedsCapacity("P1"));
  EXPECT_FALSE(policy.NeedsCapacity("P2"));
  EXPECT_EQ(policy.PoolsFor(Tier::kNormal), Pools({"P2"}));  // others are unaffected
  EXPECT_EQ(policy.State(Tier::kRealtime).num_borrows, 1u);
  // Recovery: fast requests; the slow ones age out of the 10 s window after a while.
  int64_t recovered_at_ms = -1;
  for (int step = 0; step < 300 && recovered_at_ms < 0; ++step) {
    Traffic(Tier::kRealtime, 1, 400);
    if (!policy.NeedsCapacity(Tier::kRealtime)) recovered_at_ms = clock_.now_ms;
  }
  ASSERT_GE(recovered_at_ms, 0);
  const BorrowPolicy::TierState state = policy.State(Tier::kRealtime);
  EXPECT_EQ(state.num_give_backs, 1u);
  EXPECT_EQ(state.num_borrows, 1u);
  EXPECT_LT(*state.p95_ms, 2000 * 0.8);
  EXPECT_EQ(policy.PoolsFor(Tier::kRealtime), Pools({"P1"}));
  // Overload began at 1000 ms and lasted 2 s: slow samples leave the window by ~13 s; the
  // give-back comes hold_ms (5 s) later, not before.
  EXPECT_GE(recovered_at_ms, 1000 + 2000 + 10000 - 1000 + 5000);
  EXPECT_LE(recovered_at_ms, 1000 + 2000 + 10000 + 5000 + 200);
}

// A P95 hovering between threshold * hysteresis and the threshold keeps the state it has:
// one borrow, no give-back, however long it hovers; a dip shorter than hold_ms neither.
TEST_F(BorrowPolicyTest, HysteresisPreventsFlapping) {
  BorrowPolicy policy(PolicyOptions(), &window_);
  Traffic(Tier::kNormal, 30, 5500);  // over 5 s
  ASSERT_TRUE(policy.NeedsCapacity(Tier::kNormal));
  for (int i = 0; i < 600; ++i) {  // 60 s alternating 4.2 s and 4.9 s: under 5 s, over 4 s
    Traffic(Tier::kNormal, 1, i % 2 ? 4200 : 4900);
    ASSERT_TRUE(policy.NeedsCapacity(Tier::kNormal)) << i;
  }
  // A short dip under 4 s (the window forgets the slow ones quickly at 10 req/s) ...
  TtftWindowOptions options = WindowOptions();
  options.window_ms = 1000;
  TtftWindow short_window(options);
  BorrowPolicy dipping(PolicyOptions(), &short_window);
  for (int i = 0; i < 30; ++i) {
    short_window.Add(Tier::kNormal, 6000);
    clock_.Advance(10);
  }
  ASSERT_TRUE(dipping.NeedsCapacity(Tier::kNormal));
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 40; ++i) {  // 4 s fast: less than hold_ms
      short_window.Add(Tier::kNormal, 1000);
      clock_.Advance(100);
      ASSERT_TRUE(dipping.NeedsCapacity(Tier::kNormal));
    }
    for (int i = 0; i < 10; ++i) {  // then slow again for 1 s
      short_window.Add(Tier::kNormal, 4500);
      clock_.Advance(100);
      ASSERT_TRUE(dipping.NeedsCapacity(Tier::kNormal));
    }
  }
  EXPECT_EQ(policy.State(Tier::kNormal).num_borrows, 1u);
  EXPECT_EQ(policy.State(Tier::kNormal).num_give_backs, 0u);
  EXPECT_EQ(dipping.State(Tier::kNormal).num_borrows, 1u);
  EXPECT_EQ(dipping.State(Tier::kNormal).num_give_backs, 0u);
}

TEST_F(BorrowPolicyTest, NormalBorrowsOnlyBelowItAndBatchNever) {
  BorrowPolicy policy(PolicyOptions(), &window_);
  Traffic(Tier::kNormal, 30, 8000);
  Traffic(Tier::kBatch, 30, 600000);
  EXPECT_EQ(policy.PoolsFor(Tier::kNormal), Pools({"P2", "P3"}));
  EXPECT_TRUE(policy.NeedsCapacity("P2"));
  EXPECT_EQ(policy.PoolsFor(Tier::kBatch), Pools({"P3"}));
  EXPECT_FALSE(policy.NeedsCapacity(Tier::kBatch));
  EXPECT_FALSE(policy.NeedsCapacity("P3"));
  EXPECT_EQ(policy.State(Tier::kBatch).num_borrows, 0u);
}

TEST_F(BorrowPolicyTest, SharedPoolsAreListedOnce) {
  BorrowPolicyOptions options = PolicyOptions();
  options.pools = {"fast", "bulk", "bulk"};
  options.threshold_ms = {100, 0, 0};
  BorrowPolicy policy(options, &window_);
  Traffic(Tier::kRealtime, 30, 150);
  EXPECT_EQ(policy.PoolsFor(Tier::kRealtime), Pools({"fast", "bulk"}));
  EXPECT_TRUE(policy.NeedsCapacity("fast"));
  EXPECT_FALSE(policy.NeedsCapacity("bulk"));
  Traffic(Tier::kNormal, 30, 1e6);  // threshold 0: normal never borrows here
  EXPECT_EQ(policy.PoolsFor(Tier::kNormal), Pools({"bulk"}));
}

// PoolsFor sits on the request path: it re-reads the window only every eval_interval_ms.
TEST_F(BorrowPolicyTest, EvaluatesAtMostEveryInterval) {
  BorrowPolicyOptions options = PolicyOptions();
  options.eval_interval_ms = 1000;
  BorrowPolicy policy(options, &window_);
  EXPECT_FALSE(policy.NeedsCapacity(Tier::kRealtime));
  Traffic(Tier::kRealtime, 30, 3000, 10);  // 300 ms pass
  EXPECT_FALSE(policy.NeedsCapacity(Tier::kRealtime));
  policy.Evaluate();
  EXPECT_TRUE(policy.NeedsCapacity(Tier::kRealtime));
}

TEST_F(BorrowPolicyTest, ValidationNamesTheField) {
  BorrowPolicyOptions options = PolicyOptions();
  options.pools[TierIndex(Tier::kBatch)] = "";
  EXPECT_NE(ValidateBorrowPolicyOptions(options).message().find("pools.batch"), std::string::npos);
  options = PolicyOptions();
  options.threshold_ms[TierIndex(Tier::kNormal)] = -1;
  EXPECT_NE(ValidateBorrowPolicyOptions(options).message().find("threshold_ms.normal"), std::string::npos);
  options = PolicyOptions();
  options.hysteresis = 1.5;
  EXPECT_NE(ValidateBorrowPolicyOptions(options).message().find("hysteresis"), std::string::npos);
  options = PolicyOptions();
  options.min_samples = 0;
  EXPECT_NE(ValidateBorrowPolicyOptions(options).message().find("min_samples"), std::string::npos);
  options = PolicyOptions();
  options.hold_ms = -1;
  EXPECT_NE(ValidateBorrowPolicyOptions(options).message().find("hold_ms"), std::string::npos);
}

}  // namespace
}  // namespace surge::router
