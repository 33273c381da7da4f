// PeriodicThread: runs until stopped, wakes early on Wake(), and Stop() ends every wait at once
// (a Stop that did not would hang the test until ctest's timeout; nothing here is timed).
#include "base/periodic_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace surge {
namespace {

constexpr auto kLong = std::chrono::hours(1);

TEST(PeriodicThreadTest, RunsAgainUntilStopped) {
  PeriodicThread thread;
  std::atomic<int> num_runs{0};
  std::promise<void> ran_five;
  thread.Start([&] {
    if (++num_runs == 5) ran_five.set_value();
    return PeriodicThread::Duration::zero();
  });
  ran_five.get_future().wait();
  thread.Stop();
  const int after_stop = num_runs.load();
  EXPECT_GE(after_stop, 5);
  thread.Stop();  // idempotent
  EXPECT_EQ(num_runs.load(), after_stop);
}

TEST(PeriodicThreadTest, WakeRunsTheTaskBeforeItsWaitIsOver) {
  PeriodicThread thread;
  std::atomic<int> num_runs{0};
  std::promise<void> first, second;
  thread.Start(
      kLong,
      [&] {
        const int run = ++num_runs;
        if (run == 1) first.set_value();
        if (run == 2) second.set_value();
      },
      kLong);
  thread.Wake();
  first.get_future().wait();
  thread.Wake();
  second.get_future().wait();
  thread.Stop();  // ends the hour-long wait
  EXPECT_EQ(num_runs.load(), 2);
}

TEST(PeriodicThreadTest, StopEndsTheTasksOwnSleep) {
  PeriodicThread thread;
  std::promise<void> sleeping;
  std::promise<bool> slept;
  thread.Start([&] {
    EXPECT_FALSE(thread.stopping());
    sleeping.set_value();
    slept.set_value(thread.SleepFor(kLong));
    return kLong;
  });
  sleeping.get_future().wait();
  std::future<bool> result = slept.get_future();
  thread.Stop();
  EXPECT_FALSE(result.get());
  EXPECT_TRUE(thread.stopping());
  EXPECT_FALSE(thread.SleepFor(kLong));  // at once, once stopped
}

TEST(PeriodicThreadTest, StopWithoutStartAndNoRunAfterStop) {
  PeriodicThread idle;
  idle.Stop();
  PeriodicThread thread;
  std::atomic<int> num_runs{0};
  thread.Start(kLong, [&] { ++num_runs; }, kLong);
  thread.Stop();
  thread.Wake();
  EXPECT_EQ(num_runs.load(), 0);
}

}  // namespace
}  // namespace surge
