// KvEventHub: ordering and numbering of batches, the snapshot a subscription starts with,
// drop + snapshot when a subscriber falls behind (the publisher never waits), and the
// subscriber bound.
#include "engine/kv_event_hub.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace surge {
namespace {

using Type = KvEvent::Type;

std::vector<KvEvent> Stored(std::vector<uint64_t> hashes) { return {{Type::kStored, std::move(hashes)}}; }
std::vector<KvEvent> Evicted(std::vector<uint64_t> hashes) { return {{Type::kEvicted, std::move(hashes)}}; }

std::vector<uint64_t> Sorted(std::vector<uint64_t> hashes) {
  std::sort(hashes.begin(), hashes.end());
  return hashes;
}

TEST(KvEventHubTest, ASubscriptionStartsWithASnapshotThenGetsBatchesInOrder) {
  KvEventHub hub;
  hub.Publish(Stored({1, 2, 3}));
  hub.Publish(Evicted({2}));
  int num_notified = 0;
  auto subscription = hub.Subscribe([&] { ++num_notified; });
  ASSERT_TRUE(subscription.ok());
  std::vector<KvEventBatch> batches = (*subscription)->Poll();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_TRUE(batches[0].snapshot);
  EXPECT_EQ(batches[0].seq, 2u);
  ASSERT_EQ(batches[0].events.size(), 2u);
  EXPECT_EQ(batches[0].events[0].type, Type::kCleared);
  EXPECT_EQ(batches[0].events[1].type, Type::kStored);
  EXPECT_EQ(Sorted(batches[0].events[1].block_hashes), (std::vector<uint64_t>{1, 3}));

  hub.Publish(Stored({4}));
  hub.Publish(Evicted({1}));
  hub.Publish({});  // an empty step publishes nothing
  EXPECT_EQ(num_notified, 1);  // one notify until the next Poll
  batches = (*subscription)->Poll();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].seq, 3u);
  EXPECT_EQ(batches[1].seq, 4u);
  EXPECT_FALSE(batches[0].snapshot);
  EXPECT_EQ(batches[0].events[0].block_hashes, (std::vector<uint64_t>{4}));
  EXPECT_EQ(batches[1].events[0].type, Type::kEvicted);
  EXPECT_TRUE((*subscription)->Poll().empty());
  EXPECT_EQ((*subscription)->num_gaps(), 0);
  EXPECT_EQ(hub.num_cached_blocks(), 2);
}

TEST(KvEventHubTest, ASlowSubscriberIsDroppedToASnapshotAndOthersAreNot) {
  KvEventHub hub({.max_buffered_hashes = 4, .max_subscribers = 4});
  auto slow = hub.Subscribe(nullptr);
  auto fast = hub.Subscribe(nullptr);
  ASSERT_TRUE(slow.ok() && fast.ok());
  (*slow)->Poll();
  (*fast)->Poll();
  uint64_t next_seq = 1;
  for (uint64_t hash = 10; hash < 20; ++hash) {
    hub.Publish(Stored({hash}));
    std::vector<KvEventBatch> batches = (*fast)->Poll();
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_EQ(batches[0].seq, next_seq++);
  }
  EXPECT_EQ((*fast)->num_gaps(), 0);
  const std::vector<KvEventBatch> batches = (*slow)->Poll();
  EXPECT_EQ((*slow)->num_gaps(), 1);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_TRUE(batches[0].snapshot);
  EXPECT_EQ(batches[0].seq, 10u);
  EXPECT_EQ(batches[0].events[1].block_hashes.size(), 10u);
  hub.Publish(Evicted({10}));
  const std::vector<KvEventBatch> next = (*slow)->Poll();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].seq, 11u);  // consecutive again after the snapshot
}

TEST(KvEventHubTest, SubscribersAreBoundedAndLeaveOnDestruction) {
  KvEventHub hub({.max_buffered_hashes = 16, .max_subscribers = 2});
  auto first = hub.Subscribe(nullptr);
  auto second = hub.Subscribe(nullptr);
  ASSERT_TRUE(first.ok() && second.ok());
  auto third = hub.Subscribe(nullptr);
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  (*first).reset();
  EXPECT_EQ(hub.num_subscribers(), 1);
  EXPECT_TRUE(hub.Subscribe(nullptr).ok());
}

// The publisher never blocks on subscribers, whatever their pace: a reader thread applying
// every batch ends with exactly the hub's state.
TEST(KvEventHubTest, AConcurrentReaderConvergesToTheCache) {
  KvEventHub hub({.max_buffered_hashes = 8, .max_subscribers = 1});
  auto subscription = hub.Subscribe(nullptr);
  ASSERT_TRUE(subscription.ok());
  std::atomic<bool> done{false};
  std::vector<uint64_t> mirror;
  std::thread reader([&] {
    auto apply = [&] {
      for (const KvEventBatch& batch : (*subscription)->Poll()) {
        for (const KvEvent& event : batch.events) {
          if (event.type == Type::kCleared) mirror.clear();
          for (uint64_t hash : event.block_hashes) {
            if (event.type == Type::kStored) mirror.push_back(hash);
            if (event.type == Type::kEvicted) std::erase(mirror, hash);
          }
        }
      }
    };
    while (!done) apply();
    apply();
  });
  for (uint64_t hash = 1; hash <= 2000; ++hash) {
    hub.Publish(Stored({hash, hash + 100000}));
    if (hash > 3) hub.Publish(Evicted({hash - 3, hash - 3 + 100000}));
  }
  done = true;
  reader.join();
  EXPECT_EQ(Sorted(mirror), (std::vector<uint64_t>{1998, 1999, 2000, 101998, 101999, 102000}));
}

}  // namespace
}  // namespace surge
