// api/kv_events.h: what surge serve encodes, surge route parses back unchanged (the
// parser's refusals are tested in router/prefix/kv_events_test.cc).
#include "api/kv_events.h"

#include <gtest/gtest.h>

#include "base/block_hash.h"

namespace surge::api {
namespace {

TEST(KvEventsTest, ABatchRoundTrips) {
  const KvEventBatch batch{.seq = 7,
                           .snapshot = true,
                           .events = {{KvEventRun::Type::kCleared, {}},
                                      {KvEventRun::Type::kStored, {1, 0xaaa56d17346f94c4ULL}},
                                      {KvEventRun::Type::kEvicted, {2}}}};
  const std::string text = EncodeKvEventBatch(batch);
  EXPECT_EQ(text.rfind(R"({"seq":7,"snapshot":true,"events":[{"type":"cleared","block_hashes":[]})", 0), 0u) << text;
  StatusOr<KvEventBatch> parsed = ParseKvEventBatch(text, 3);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->seq, 7u);
  EXPECT_TRUE(parsed->snapshot);
  ASSERT_EQ(parsed->events.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(parsed->events[i].type, batch.events[i].type);
    EXPECT_EQ(parsed->events[i].block_hashes, batch.events[i].block_hashes);
  }
  EXPECT_FALSE(ParseKvEventBatch(text, 2).ok());  // three hashes over a limit of two
}

TEST(KvEventsTest, AConfigRoundTrips) {
  const KvConfig config{.block_size = 16, .hash_seed = 0xabc, .num_total_blocks = 1024};
  const std::string text = EncodeKvConfig(config);
  EXPECT_NE(text.find(std::string("\"hash\":\"") + kBlockHashName + "\""), std::string::npos) << text;
  StatusOr<KvConfig> parsed = ParseKvConfig(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->block_size, 16);
  EXPECT_EQ(parsed->hash_seed, 0xabcu);
  EXPECT_EQ(parsed->num_total_blocks, 1024);
}

}  // namespace
}  // namespace surge::api
