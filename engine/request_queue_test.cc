#include "engine/request_queue.h"

#include <gtest/gtest.h>

#include <thread>

namespace surge {
namespace {

// The queue never looks inside a request, so null ones stand in for real ones here.
TEST(RequestQueueTest, RefusesBeyondMaxWaitingCountingTheScheduler) {
  RequestQueue queue(3);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(queue.Push(nullptr).ok());
  EXPECT_EQ(queue.stats().num_waiting, 3);
  EXPECT_EQ(queue.Push(nullptr).code(), StatusCode::kResourceExhausted);

  std::vector<std::unique_ptr<RequestState>> requests;
  std::vector<RequestId> cancels;
  EXPECT_TRUE(queue.Take(/*wait=*/false, requests, cancels));
  EXPECT_EQ(requests.size(), 3u);
  // Taken requests still count until the engine publishes its own waiting count.
  EXPECT_EQ(queue.Push(nullptr).code(), StatusCode::kResourceExhausted);
  EngineStats stats;
  stats.num_waiting = 1;  // two were admitted
  queue.PublishStats(stats);
  EXPECT_TRUE(queue.Push(nullptr).ok());
  EXPECT_TRUE(queue.Push(nullptr).ok());
  EXPECT_EQ(queue.Push(nullptr).code(), StatusCode::kResourceExhausted);
}

TEST(RequestQueueTest, TakeSleepsUntilInputOrClose) {
  RequestQueue queue(8);
  std::vector<std::unique_ptr<RequestState>> requests;
  std::vector<RequestId> cancels;
  std::thread client([&] { queue.Cancel(RequestId{42}); });
  EXPECT_TRUE(queue.Take(/*wait=*/true, requests, cancels));
  client.join();
  EXPECT_EQ(cancels, std::vector<RequestId>{RequestId{42}});
  std::thread closer([&] { queue.Close(); });
  EXPECT_FALSE(queue.Take(/*wait=*/true, requests, cancels));
  closer.join();
  EXPECT_TRUE(cancels.empty());
  EXPECT_EQ(queue.Push(nullptr).code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace surge
