#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace surge {
namespace {

// Every item is visited exactly once, whatever the size and chunking.
void ExpectEachItemOnce(ThreadPool& pool, int64_t num_items, int64_t items_per_chunk) {
  std::vector<std::atomic<int>> visits(num_items);
  auto fn = [&](int64_t begin, int64_t end) {
    ASSERT_LE(0, begin);
    ASSERT_LT(begin, end);
    ASSERT_LE(end, num_items);
    for (int64_t i = begin; i < end; ++i) visits[i].fetch_add(1);
  };
  if (items_per_chunk > 0) {
    pool.ParallelFor(num_items, items_per_chunk, fn);
  } else {
    pool.ParallelFor(num_items, fn);
  }
  for (int64_t i = 0; i < num_items; ++i) ASSERT_EQ(visits[i].load(), 1) << "item " << i;
}

TEST(ThreadPoolTest, CoversEveryItemOnce) {
  for (int num_threads : {1, 2, 3, 8}) {
    ThreadPool pool(num_threads);
    EXPECT_EQ(pool.num_threads(), num_threads);
    for (int64_t num_items : {0, 1, 2, 7, 64, 1000, 12345}) {
      for (int64_t chunk : {0, 1, 3, 100}) ExpectEachItemOnce(pool, num_items, chunk);
    }
  }
}

TEST(ThreadPoolTest, DefaultUsesAllCores) {
  ThreadPool pool;
  EXPECT_GE(pool.num_threads(), 1);
  EXPECT_EQ(pool.num_threads(),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

TEST(ThreadPoolTest, ManyBackToBackCallsSeeEachOthersWrites) {
  ThreadPool pool(4);
  std::vector<int64_t> data(1000, 0);
  for (int round = 0; round < 2000; ++round) {
    pool.ParallelFor(static_cast<int64_t>(data.size()), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) data[i] += i;
    });
  }
  for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i) ASSERT_EQ(data[i], 2000 * i);
}

TEST(ThreadPoolTest, NestedCallsRunInline) {
  ThreadPool pool(4);
  std::atomic<int64_t> total{0};
  pool.ParallelFor(16, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      pool.ParallelFor(10, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
    }
  });
  EXPECT_EQ(total.load(), 160);
}

TEST(ThreadPoolTest, CallsFromSeveralThreadsTakeTurns) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        pool.ParallelFor(100, 7, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 200 * 100);
}

}  // namespace
}  // namespace surge
