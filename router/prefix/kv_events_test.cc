// The router's parsers of GET /kv_config and GET /kv_events batches: the fields, and the
// refusals that keep a broken or hostile engine from confusing or growing the router.
#include "router/prefix/kv_events.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace surge::router {
namespace {

TEST(KvEventsTest, ParsesAConfig) {
  StatusOr<KvConfig> config = ParseKvConfig(
      R"({"prefix_caching":true,"block_size":16,"hash":"splitmix64-chain-v1","hash_seed":"00000000000000ff",)"
      R"("num_total_blocks":4096,"events":"/kv_events"})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->block_size, 16);
  EXPECT_EQ(config->hash_seed, 0xffu);
  EXPECT_EQ(config->num_total_blocks, 4096);
}

TEST(KvEventsTest, RefusesAConfigItCannotReproduce) {
  EXPECT_EQ(ParseKvConfig(R"({"block_size":16,"hash":"sha256","hash_seed":"0","num_total_blocks":1})").status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(ParseKvConfig(R"({"block_size":0,"hash":"splitmix64-chain-v1","hash_seed":"0","num_total_blocks":1})")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseKvConfig(R"({"block_size":16,"hash":"splitmix64-chain-v1","hash_seed":7,"num_total_blocks":1})").ok());
  EXPECT_FALSE(ParseKvConfig("[]").ok());
}

// Issue 31: each of these threw inside the HTTP client's callback (ending the router), was
// undefined behaviour, or silently wrapped; each is now a refusal naming the field.
TEST(KvEventsTest, RefusesHostileConfigsWithTheFieldNamed) {
  const std::string seed = R"("hash":"splitmix64-chain-v1","hash_seed":"0","num_total_blocks":1)";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"hash":1})", "hash"},
      {R"({"block_size":"16",)" + seed + "}", "block_size"},
      {R"({"block_size":1e300,)" + seed + "}", "block_size"},
      {R"({"block_size":4294967297,)" + seed + "}", "block_size"},
      {R"({"block_size":16.5,)" + seed + "}", "block_size"},
      {R"({"block_size":-16,)" + seed + "}", "block_size"},
      {R"({"block_size":16,"hash":"splitmix64-chain-v1","hash_seed":"0","num_total_blocks":1e300})", "num_total_blocks"},
      {R"({"block_size":16,"hash":"splitmix64-chain-v1","hash_seed":[],"num_total_blocks":1})", "hash_seed"},
      {R"({"block_size":16,"hash":"splitmix64-chain-v1","hash_seed":"xyz","num_total_blocks":1})", "hash_seed"},
      {R"({"block_size":16,"hash":"splitmix64-chain-v1","hash_seed":)" + std::string(100'000, '[') +
           std::string(100'000, ']') + R"(,"num_total_blocks":1})",
       "deeper"},
      {"{\"hash\":\"\xff\"}", "not valid JSON"},
      {R"({"hash":"splitmix64-chain-v1","hash_seed":"0","num_total_blocks":1})", "block_size is required"},
  };
  for (const auto& [text, named] : cases) {
    StatusOr<KvConfig> config = ParseKvConfig(text);
    ASSERT_FALSE(config.ok()) << text.substr(0, 200);
    EXPECT_NE(config.status().message().find(named), std::string::npos) << config.status().ToString();
  }
  // The hash names itself, in JSON, whatever bytes it holds.
  EXPECT_EQ(ParseKvConfig(R"({"hash":"md5\u0000"})").status().code(), StatusCode::kUnimplemented);
}

TEST(KvEventsTest, ParsesABatch) {
  StatusOr<KvEventBatch> batch = ParseKvEventBatch(
      R"({"seq":12,"snapshot":false,"events":[{"type":"stored","block_hashes":["aaa56d17346f94c4","1"]},)"
      R"({"type":"evicted","block_hashes":["ffffffffffffffff"]},{"type":"cleared","block_hashes":[]}]})",
      16);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->seq, 12u);
  EXPECT_FALSE(batch->snapshot);
  ASSERT_EQ(batch->events.size(), 3u);
  EXPECT_EQ(batch->events[0].type, KvEventRun::Type::kStored);
  EXPECT_EQ(batch->events[0].block_hashes, (std::vector<uint64_t>{0xaaa56d17346f94c4ULL, 1}));
  EXPECT_EQ(batch->events[1].type, KvEventRun::Type::kEvicted);
  EXPECT_EQ(batch->events[1].block_hashes, (std::vector<uint64_t>{~uint64_t{0}}));
  EXPECT_EQ(batch->events[2].type, KvEventRun::Type::kCleared);
}

TEST(KvEventsTest, RefusesBadBatches) {
  for (const char* bad : {
           "not json",
           R"({"snapshot":false,"events":[]})",                                        // no seq
           R"({"seq":0,"events":[]})",                                                 // seq starts at 1
           R"({"seq":1,"snapshot":"yes","events":[]})",
           R"({"seq":1})",                                                             // no events
           R"({"seq":1,"events":[{"type":"moved","block_hashes":[]}]})",               // unknown type
           R"({"seq":1,"events":[{"type":"stored","block_hashes":[12]}]})",            // a number loses bits
           R"({"seq":1,"events":[{"type":"stored","block_hashes":["xyz"]}]})",
           R"({"seq":1,"events":[{"type":"stored","block_hashes":"1"}]})",
           R"({"seq":1,"events":[[[[[[[[[]]]]]]]]]})",                                 // too deep
           R"({"seq":1e300,"events":[]})",                                             // not an integer
           R"({"seq":18446744073709551615,"events":[]})",                              // past int64
           R"({"seq":"1","events":[]})",
           R"({"seq":1,"events":[{"type":1}]})",
           R"({"seq":1,"events":[{"type":{"a":[1]}}]})",
           R"({"seq":1,"events":[{"type":"stored","block_hashes":{"a":1}}]})",
           "{\"seq\":1,\"events\":[{\"type\":\"\xff\"}]}",                   // invalid UTF-8
       }) {
    EXPECT_FALSE(ParseKvEventBatch(bad, 16).ok()) << bad;
  }
  // A snapshot taken before the engine's first batch is the state after batch 0.
  auto initial = ParseKvEventBatch(R"({"seq":0,"snapshot":true,"events":[{"type":"cleared","block_hashes":[]}]})", 4);
  ASSERT_TRUE(initial.ok()) << initial.status().ToString();
  EXPECT_TRUE(initial->snapshot);
  // More hashes than the bound, counted across the batch's events.
  const std::string big = R"({"seq":1,"events":[{"type":"stored","block_hashes":["1","2","3"]},)"
                          R"({"type":"evicted","block_hashes":["4","5"]}]})";
  EXPECT_TRUE(ParseKvEventBatch(big, 5).ok());
  EXPECT_EQ(ParseKvEventBatch(big, 4).status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace surge::router
