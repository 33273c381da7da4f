// The priority policy with aging, at the scheduler level: deterministic steps (each one
// advances the arrival clock by a fixed 10 ms), no model, no wall clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "engine/scheduler_test_util.h"
#include "engine/scheduling_policy.h"

namespace surge {
namespace {

using testing_util::Harness;
using testing_util::Options;

constexpr int32_t kRealtime = -10;
constexpr int32_t kBatch = 10;

TEST(PriorityPolicyTest, ParsesTheFlagValues) {
  EXPECT_EQ(*ParseSchedulingPolicy("fcfs"), SchedulingPolicyKind::kFcfs);
  EXPECT_EQ(*ParseSchedulingPolicy("priority"), SchedulingPolicyKind::kPriority);
  EXPECT_FALSE(ParseSchedulingPolicy("lifo").ok());
}

TEST(PriorityPolicyTest, AdmitsByPriorityAndAgesWaitingRequests) {
  PriorityPolicy policy(/*aging_seconds=*/1.0);
  Sequence old_batch, new_normal, new_realtime;
  old_batch.priority = kBatch;
  old_batch.arrival_time_s = 0;    // key 10
  new_normal.arrival_time_s = 5;   // key 5
  new_realtime.priority = kRealtime;
  new_realtime.arrival_time_s = 25;  // key 15: arrived more than 20 s after the batch one
  std::deque<Sequence*> waiting = {&old_batch, &new_normal, &new_realtime};
  EXPECT_EQ(waiting[policy.PickNextWaiting(waiting)], &new_normal);
  waiting.erase(waiting.begin() + 1);
  EXPECT_EQ(waiting[policy.PickNextWaiting(waiting)], &old_batch);  // aged past the realtime one
  new_realtime.arrival_time_s = 15;  // key 5: within the window, it still goes first
  EXPECT_EQ(waiting[policy.PickNextWaiting(waiting)], &new_realtime);
}

TEST(PriorityPolicyTest, PreemptsTheLeastUrgentMostRecentlyStarted) {
  PriorityPolicy policy(1.0);
  Sequence a, b, c, d;
  a.priority = kBatch;
  b.priority = kRealtime;
  c.priority = kBatch;
  d.priority = 0;
  std::vector<Sequence*> running = {&a, &b, &c, &d};  // admission order
  EXPECT_EQ(running[policy.PickVictim(running)], &c);  // batch ties: the later one
  running = {&b, &d};
  EXPECT_EQ(running[policy.PickVictim(running)], &d);
}

// 90% batch, 10% realtime, arriving at about four times what the engine can serve: the
// batch backlog grows without end, yet realtime requests only wait for a running
// sequence to finish. Each sequence is 1 prompt step + 32 decode steps, so with 8 slots
// one frees every ~4 steps and none stays longer than 34 steps: the stated bound is that
// realtime requests' P95 queue time is at most 34 steps (0.34 s of the step clock), where
// FCFS makes them wait behind the whole backlog.
struct TierResult {
  std::vector<int32_t> realtime_waits;  // steps from arrival to first scheduled
  int32_t num_unfinished = 0;
};

TierResult RunTieredOverload(std::unique_ptr<SchedulingPolicy> policy) {
  Harness h(16, 1000, Options(8, 256), std::move(policy));
  std::vector<std::pair<Sequence*, int32_t>> realtime;  // with the arrival step
  for (int32_t step = 0; step < 600; ++step) {
    const bool is_realtime = step % 10 == 5;
    Sequence* seq = h.Add(16, 32, 1, is_realtime ? kRealtime : kBatch, /*first_token=*/step % 7);
    if (is_realtime) realtime.emplace_back(seq, h.num_steps());
    h.Step();
    if (testing::Test::HasFailure()) return {};
  }
  for (int32_t step = 0; step < 20000 && !h.AllFinished(); ++step) h.Step();
  TierResult result;
  for (const auto& [seq, arrival] : realtime) result.realtime_waits.push_back(h.AdmittedStep(seq) - arrival);
  result.num_unfinished = h.AllFinished() ? 0 : 1;
  return result;
}

int32_t P95(std::vector<int32_t> values) {
  std::sort(values.begin(), values.end());
  return values[(values.size() * 95 + 99) / 100 - 1];
}

TEST(PriorityPolicyTest, RealtimeQueueTimeStaysBoundedUnderABatchOverload) {
  const TierResult priority = RunTieredOverload(std::make_unique<PriorityPolicy>(1.0));
  ASSERT_FALSE(HasFailure());
  const TierResult fcfs = RunTieredOverload(std::make_unique<FcfsPolicy>());
  ASSERT_FALSE(HasFailure());
  const int32_t p95_priority = P95(priority.realtime_waits);
  const int32_t p95_fcfs = P95(fcfs.realtime_waits);
  std::printf("[          ] realtime P95 queue time: priority %d steps, fcfs %d steps\n", p95_priority, p95_fcfs);
  EXPECT_LE(p95_priority, 34);
  EXPECT_GT(p95_fcfs, 10 * 34);  // the same workload starves them under FCFS
  EXPECT_EQ(priority.num_unfinished, 0);  // no request waits forever, batch ones included
  EXPECT_EQ(fcfs.num_unfinished, 0);
}

// Aging: realtime requests alone overload the engine, forever; a batch request is still
// admitted, and before every realtime request that arrived more than (10 - -10) * aging
// seconds after it -- the starvation bound PriorityPolicy states.
TEST(PriorityPolicyTest, AgingAdmitsABatchRequestDespiteEndlessRealtimeTraffic) {
  constexpr double kAgingSeconds = 0.05;  // 5 steps of 10 ms per priority level
  Harness h(16, 1000, Options(4, 256), std::make_unique<PriorityPolicy>(kAgingSeconds));
  std::vector<std::pair<Sequence*, double>> realtime;  // with the arrival time
  Sequence* batch = nullptr;
  double batch_arrival = 0;
  for (int32_t step = 0; step < 1500; ++step) {
    if (step == 20) {
      batch_arrival = h.now_s();
      batch = h.Add(16, 8, 1, kBatch);
    }
    realtime.emplace_back(h.Add(16, 8, 1, kRealtime, step % 5), h.now_s());
    h.Step();
    ASSERT_FALSE(HasFailure()) << "step " << step;
  }
  const int32_t admitted = h.AdmittedStep(batch);
  ASSERT_GE(admitted, 0) << "the batch request starved";
  const double window = (kBatch - kRealtime) * kAgingSeconds;
  for (const auto& [seq, arrival] : realtime) {
    if (arrival > batch_arrival + window + 1e-9 && h.AdmittedStep(seq) >= 0) {
      EXPECT_GT(h.AdmittedStep(seq), admitted) << "a realtime request arriving at " << arrival
                                              << " s overtook the batch request of " << batch_arrival << " s";
    }
  }
  // Without aging (a huge interval) the same batch request never runs.
  Harness starved(16, 1000, Options(4, 256), std::make_unique<PriorityPolicy>(1e9));
  Sequence* victim = nullptr;
  for (int32_t step = 0; step < 1500; ++step) {
    if (step == 20) victim = starved.Add(16, 8, 1, kBatch);
    starved.Add(16, 8, 1, kRealtime, step % 5);
    starved.Step();
  }
  EXPECT_EQ(starved.AdmittedStep(victim), -1);
}

}  // namespace
}  // namespace surge
