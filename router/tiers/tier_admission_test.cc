// TierAdmission: weighted shares while backlogged, no starvation, bounded queues, cancel,
// capacity changes, and concurrent use -- all in virtual time.
#include "router/tiers/tier_admission.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "router/tiers/test_clock.h"

namespace surge::router {
namespace {

TierAdmissionOptions Options(VirtualClock& clock, int32_t num_slots, int32_t max_queued = 100000) {
  TierAdmissionOptions options;
  options.num_slots = num_slots;
  options.max_queued = {max_queued, max_queued, max_queued};
  options.now_ms = clock.Fn();
  return options;
}

// Drives an admission in the way the gateway does: every admitted ticket (at once or by
// callback) is remembered in order, and Finish releases the oldest one.
class Driver {
 public:
  explicit Driver(TierAdmission* admission) : admission_(admission) {}

  TierAdmission::AdmitResult Submit(Tier tier) {
    TierAdmission::AdmitResult result = admission_->Admit(tier, [this, tier](TicketId ticket) {
      running_.push_back(ticket);
      admitted_tiers_.push_back(tier);
    });
    if (result.status.ok() && result.admitted) {
      running_.push_back(result.ticket);
      admitted_tiers_.push_back(tier);
    }
    return result;
  }
  // Releases the oldest running request; returns the tier admitted in its place, if any.
  std::optional<Tier> Finish() {
    const size_t before = admitted_tiers_.size();
    const TicketId ticket = running_.front();
    running_.pop_front();
    admission_->Release(ticket);
    if (admitted_tiers_.size() == before) return std::nullopt;
    return admitted_tiers_.back();
  }
  const std::vector<Tier>& admitted_tiers() const { return admitted_tiers_; }
  size_t num_running() const { return running_.size(); }

 private:
  TierAdmission* admission_;
  std::deque<TicketId> running_;
  std::vector<Tier> admitted_tiers_;
};

TEST(TierAdmissionTest, AdmitsAtOnceWhileSlotsAreFree) {
  VirtualClock clock;
  TierAdmission admission(Options(clock, 2));
  Driver driver(&admission);
  EXPECT_TRUE(driver.Submit(Tier::kBatch).admitted);
  EXPECT_TRUE(driver.Submit(Tier::kRealtime).admitted);
  const TierAdmission::AdmitResult third = driver.Submit(Tier::kNormal);
  ASSERT_TRUE(third.status.ok());
  EXPECT_FALSE(third.admitted);
  EXPECT_EQ(admission.num_in_use(), 2);
  EXPECT_EQ(admission.QueueDepth(Tier::kNormal), 1);
  EXPECT_EQ(driver.Finish(), Tier::kNormal);
  EXPECT_EQ(admission.QueueDepth(Tier::kNormal), 0);
  EXPECT_EQ(admission.num_in_use(), 2);
  EXPECT_EQ(admission.Counts(Tier::kNormal).num_admitted, 1u);
}

// While all three tiers stay backlogged, freed slots go 10 : 5 : 1.
TEST(TierAdmissionTest, SharesFollowTheWeightsWhileBacklogged) {
  VirtualClock clock;
  TierAdmission admission(Options(clock, 4));
  Driver driver(&admission);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(driver.Submit(Tier::kNormal).admitted);
  for (Tier tier : kAllTiers) {
    for (int i = 0; i < 50; ++i) ASSERT_FALSE(driver.Submit(tier).admitted);
  }
  std::array<int, kNumTiers> counts = {0, 0, 0};
  constexpr int kNumAdmissions = 16000;
  for (int i = 0; i < kNumAdmissions; ++i) {
    const std::optional<Tier> next = driver.Finish();
    ASSERT_TRUE(next.has_value());
    ++counts[TierIndex(*next)];
    ASSERT_FALSE(driver.Submit(*next).admitted);  // keep every tier backlogged
  }
  EXPECT_NEAR(counts[0], kNumAdmissions * 10 / 16, kNumAdmissions * 0.01);
  EXPECT_NEAR(counts[1], kNumAdmissions * 5 / 16, kNumAdmissions * 0.01);
  EXPECT_NEAR(counts[2], kNumAdmissions * 1 / 16, kNumAdmissions * 0.01);
}

TEST(TierAdmissionTest, ConfiguredWeightsApply) {
  VirtualClock clock;
  TierAdmissionOptions options = Options(clock, 1);
  options.weights = {1, 1, 2};
  TierAdmission admission(options);
  Driver driver(&admission);
  ASSERT_TRUE(driver.Submit(Tier::kRealtime).admitted);
  for (Tier tier : kAllTiers) {
    for (int i = 0; i < 10; ++i) ASSERT_FALSE(driver.Submit(tier).admitted);
  }
  std::array<int, kNumTiers> counts = {0, 0, 0};
  for (int i = 0; i < 4000; ++i) {
    const Tier next = driver.Finish().value();
    ++counts[TierIndex(next)];
    driver.Submit(next);
  }
  EXPECT_EQ(counts[0], 1000);  // stride scheduling is exact over whole rounds
  EXPECT_EQ(counts[1], 1000);
  EXPECT_EQ(counts[2], 2000);
}

// The lightest tier is never more than one round (sum of weights) away from a slot.
TEST(TierAdmissionTest, NoTierStarves) {
  VirtualClock clock;
  TierAdmission admission(Options(clock, 1));
  Driver driver(&admission);
  ASSERT_TRUE(driver.Submit(Tier::kRealtime).admitted);
  for (Tier tier : kAllTiers) {
    for (int i = 0; i < 20; ++i) driver.Submit(tier);
  }
  int since_batch = 0;
  int max_gap = 0;
  for (int i = 0; i < 3200; ++i) {
    const Tier next = driver.Finish().value();
    since_batch = next == Tier::kBatch ? 0 : since_batch + 1;
    max_gap = std::max(max_gap, since_batch);
    driver.Submit(next);
  }
  EXPECT_LE(max_gap, 16);
}

// A tier that was idle earns no credit: when realtime joins after batch ran alone for a
// long time, batch keeps its 1/11 share instead of waiting for realtime to "catch up".
TEST(TierAdmissionTest, IdleTimeEarnsNoCredit) {
  VirtualClock clock;
  TierAdmission admission(Options(clock, 1));
  Driver driver(&admission);
  ASSERT_TRUE(driver.Submit(Tier::kBatch).admitted);
  for (int i = 0; i < 5; ++i) driver.Submit(Tier::kBatch);
  for (int i = 0; i < 1000; ++i) driver.Submit(driver.Finish().value());
  for (int i = 0; i < 20; ++i) driver.Submit(Tier::kRealtime);
  int num_batch = 0;
  for (int i = 0; i < 33; ++i) {  // three rounds of 10 + 1
    const Tier next = driver.Finish().value();
    num_batch += next == Tier::kBatch;
    driver.Submit(next);
  }
  EXPECT_GE(num_batch, 2);  // a credit of 1000 rounds would give it none
  EXPECT_LE(num_batch, 3);
}

TEST(TierAdmissionTest, FifoWithinATier) {
  VirtualClock clock;
  TierAdmission admission(Options(clock, 1));
  std::vector<TicketId> order;
  const TicketId first = admission.Admit(Tier::kNormal, nullptr).ticket;
  std::vector<TicketId> queued;
  for (int i = 0; i < 5; ++i) {
    queued.push_back(admission.Admit(Tier::kNormal, [&](TicketId t) { order.push_back(t); }).ticket);
  }
  admission.Release(first);
  for (int i = 0; i < 5; ++i) admission.Release(order.back());
  EXPECT_EQ(order, queued);
}

TEST(TierAdmissionTest, FullQueueIsResourceExhaustedWithRetryAfter) {
  VirtualClock clock;
  TierAdmissionOptions options = Options(clock, 2);
  options.max_queued = {1, 0, 4};
  options.initial_hold_ms = 10000;
  TierAdmission admission(options);
  Driver driver(&admission);
  ASSERT_TRUE(driver.Submit(Tier::kBatch).admitted);
  ASSERT_TRUE(driver.Submit(Tier::kBatch).admitted);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(driver.Submit(Tier::kBatch).status.ok());
  const TierAdmission::AdmitResult full = driver.Submit(Tier::kBatch);
  EXPECT_EQ(full.status.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(full.status.message().find("batch"), std::string::npos);
  // 2 slots held ~10 s each admit 0.2 requests/s; the 5th in line waits ~25 s.
  EXPECT_EQ(full.retry_after_s, 25);
  EXPECT_EQ(admission.Counts(Tier::kBatch).num_rejected, 1u);
  // Queues are per tier: normal refuses at once (max_queued 0), realtime still has room.
  EXPECT_EQ(driver.Submit(Tier::kNormal).status.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(driver.Submit(Tier::kRealtime).status.ok());
  const TierAdmission::AdmitResult realtime_full = driver.Submit(Tier::kRealtime);
  EXPECT_EQ(realtime_full.status.code(), StatusCode::kResourceExhausted);
  EXPECT_GE(realtime_full.retry_after_s, 1);
  EXPECT_LT(realtime_full.retry_after_s, full.retry_after_s);  // the heavier share drains faster
}

TEST(TierAdmissionTest, RetryAfterFollowsMeasuredHoldTimes) {
  VirtualClock clock;
  TierAdmissionOptions options = Options(clock, 1, 1);
  options.initial_hold_ms = 100000;
  TierAdmission admission(options);
  Driver driver(&admission);
  ASSERT_TRUE(driver.Submit(Tier::kNormal).admitted);
  for (int i = 0; i < 200; ++i) {  // requests that take 100 ms
    ASSERT_TRUE(driver.Submit(Tier::kNormal).status.ok());
    clock.Advance(100);
    driver.Finish();
  }
  driver.Submit(Tier::kNormal);
  const TierAdmission::AdmitResult full = driver.Submit(Tier::kNormal);
  ASSERT_EQ(full.status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(full.retry_after_s, 1);  // two ahead at 100 ms each: under a second, reported as 1
}

TEST(TierAdmissionTest, CancelRemovesAQueuedTicket) {
  VirtualClock clock;
  TierAdmission admission(Options(clock, 1));
  const TicketId running = admission.Admit(Tier::kNormal, nullptr).ticket;
  bool cancelled_ran = false;
  std::vector<TicketId> admitted;
  const TicketId gone = admission.Admit(Tier::kRealtime, [&](TicketId) { cancelled_ran = true; }).ticket;
  const TicketId next = admission.Admit(Tier::kBatch, [&](TicketId t) { admitted.push_back(t); }).ticket;
  EXPECT_EQ(admission.QueueDepth(Tier::kRealtime), 1);
  EXPECT_TRUE(admission.Cancel(gone));
  EXPECT_FALSE(admission.Cancel(gone));
  EXPECT_EQ(admission.QueueDepth(Tier::kRealtime), 0);
  EXPECT_EQ(admission.Counts(Tier::kRealtime).num_cancelled, 1u);
  admission.Release(running);
  EXPECT_FALSE(cancelled_ran);
  EXPECT_EQ(admitted, std::vector<TicketId>{next});
  EXPECT_FALSE(admission.Cancel(next));  // holds its slot now: the caller releases it
  EXPECT_EQ(admission.num_in_use(), 1);
  admission.Release(next);
  EXPECT_EQ(admission.num_in_use(), 0);
}

TEST(TierAdmissionTest, SlotsChangeAtRunTime) {
  VirtualClock clock;
  TierAdmission admission(Options(clock, 0));
  Driver driver(&admission);
  for (int i = 0; i < 6; ++i) ASSERT_FALSE(driver.Submit(Tier::kNormal).admitted);
  admission.SetNumSlots(4);  // a backend joined: four waiters start now
  EXPECT_EQ(driver.num_running(), 4u);
  EXPECT_EQ(admission.QueueDepth(Tier::kNormal), 2);
  admission.SetNumSlots(1);  // fewer: nothing is revoked, finishing requests free no slot
  EXPECT_EQ(driver.Finish(), std::nullopt);
  EXPECT_EQ(driver.Finish(), std::nullopt);
  EXPECT_EQ(driver.Finish(), std::nullopt);
  EXPECT_EQ(admission.num_in_use(), 1);
  EXPECT_EQ(driver.Finish(), Tier::kNormal);
}

TEST(TierAdmissionTest, ValidationNamesTheField) {
  VirtualClock clock;
  TierAdmissionOptions options = Options(clock, 1);
  options.weights[TierIndex(Tier::kBatch)] = 0;
  EXPECT_NE(ValidateTierAdmissionOptions(options).message().find("weights.batch"), std::string::npos);
  options = Options(clock, -1);
  EXPECT_NE(ValidateTierAdmissionOptions(options).message().find("num_slots"), std::string::npos);
  options = Options(clock, 1);
  options.max_queued[0] = -1;
  EXPECT_NE(ValidateTierAdmissionOptions(options).message().find("max_queued.realtime"), std::string::npos);
  options.max_queued[0] = 1;
  options.now_ms = nullptr;
  EXPECT_NE(ValidateTierAdmissionOptions(options).message().find("now_ms"), std::string::npos);
}

// Threads admit, cancel and release at once, as the gateway's executors would (a callback
// only hands its ticket over; whoever picks it up runs and releases it). The slot limit
// holds and every ticket ends admitted-and-released or cancelled.
TEST(TierAdmissionTest, ConcurrentUseKeepsTheLimit) {
  VirtualClock clock;
  TierAdmission admission(Options(clock, 3));
  std::mutex mu;
  std::vector<TicketId> handed_over;
  std::atomic<int> num_done{0};
  std::atomic<int> num_cancelled{0};
  std::atomic<bool> over_limit{false};
  auto run = [&](TicketId ticket) {
    if (admission.num_in_use() > 3) over_limit = true;
    ++num_done;
    admission.Release(ticket);
  };
  auto drain = [&] {
    std::vector<TicketId> batch;
    {
      std::lock_guard<std::mutex> lock(mu);
      batch.swap(handed_over);
    }
    for (TicketId ticket : batch) run(ticket);
    return !batch.empty();
  };
  auto hand_over = [&](TicketId ticket) {
    std::lock_guard<std::mutex> lock(mu);
    handed_over.push_back(ticket);
  };
  constexpr int kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const TierAdmission::AdmitResult result = admission.Admit(kAllTiers[(i + t) % 3], hand_over);
        if (result.admitted) {
          run(result.ticket);
        } else if (i % 7 == 0 && admission.Cancel(result.ticket)) {
          ++num_cancelled;
        }
        drain();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  while (drain()) {}
  EXPECT_EQ(num_done + num_cancelled, 4 * kPerThread);
  EXPECT_FALSE(over_limit.load());
  EXPECT_EQ(admission.num_in_use(), 0);
  for (Tier tier : kAllTiers) EXPECT_EQ(admission.QueueDepth(tier), 0);
}

}  // namespace
}  // namespace surge::router
