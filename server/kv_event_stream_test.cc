// GET /kv_config and GET /kv_events in front of an engine whose KV events come from a
// real KvEventHub: the snapshot first, then every batch in order as SSE JSON,
// 404 for an engine without a prefix cache, and shutdown ending the (endless) stream.
#include "server/kv_event_stream.h"

#include <gtest/gtest.h>

#include <future>

#include <nlohmann/json.hpp>

#include "engine/kv_event_hub.h"
#include "net/sse.h"
#include "server/server_test_util.h"

namespace surge {
namespace {

using nlohmann::json;

class KvFakeEngine : public testing_util::FakeEngine {
 public:
  KvCacheInfo KvCache() const override { return {true, 16, 0xabc, 1024}; }
  StatusOr<std::unique_ptr<KvEventSubscription>> SubscribeKvEvents(std::function<void()> notify) override {
    return hub.Subscribe(std::move(notify));
  }
  KvEventHub hub;
};

class KvEventStreamTest : public ::testing::Test {
 protected:
  void Start(EngineClient& engine) {
    auto server = OpenAiServer::Create(engine, testing_util::StoriesTokenizer(), testing_util::FakeServerOptions());
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    ASSERT_TRUE(server_->Start().ok());
  }
  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(server_->port()) + path; }

  KvFakeEngine engine_;
  testing_util::FakeEngine plain_engine_;
  std::unique_ptr<OpenAiServer> server_;
};

TEST_F(KvEventStreamTest, BatchJsonNamesTypesAndHexHashes) {
  const KvEventBatch batch{7, false, {{KvEvent::Type::kStored, {1, 0xaaa56d17346f94c4ULL}}, {KvEvent::Type::kEvicted, {2}}}};
  EXPECT_EQ(KvEventBatchJson(batch),
            R"({"seq":7,"snapshot":false,"events":[{"type":"stored","block_hashes":["0000000000000001",)"
            R"("aaa56d17346f94c4"]},{"type":"evicted","block_hashes":["0000000000000002"]}]})");
}

TEST_F(KvEventStreamTest, KvConfigSaysHowToComputeTheHashes) {
  Start(engine_);
  auto response = net::Fetch("GET", Url("/kv_config"));
  ASSERT_TRUE(response.ok());
  ASSERT_EQ(response->status, 200);
  const json body = json::parse(response->body);
  EXPECT_EQ(body["block_size"], 16);
  EXPECT_EQ(body["hash"], "splitmix64-chain-v1");
  EXPECT_EQ(body["hash_seed"], "0000000000000abc");
  EXPECT_EQ(body["num_total_blocks"], 1024);
  EXPECT_EQ(body["events"], "/kv_events");
}

TEST_F(KvEventStreamTest, WithoutAPrefixCacheBothAreRefused) {
  Start(plain_engine_);
  auto config = net::Fetch("GET", Url("/kv_config"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->status, 404);
  auto events = net::Fetch("GET", Url("/kv_events"));
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->status, 404) << events->body;
}

TEST_F(KvEventStreamTest, StreamsTheSnapshotThenEveryBatchInOrderUntilShutdown) {
  engine_.hub.Publish({{KvEvent::Type::kStored, {5}}});
  Start(engine_);
  net::HttpClient client;
  auto done = std::make_shared<std::promise<void>>();
  std::mutex mu;
  std::vector<json> received;
  auto parser = std::make_shared<net::SseParser>();
  net::ClientCallbacks callbacks;
  callbacks.on_data = [&, parser](std::string_view data, net::SteadyTime) {
    std::vector<net::SseEvent> events;
    EXPECT_TRUE(parser->Feed(data, &events).ok());
    std::lock_guard lock(mu);
    for (const auto& event : events) received.push_back(json::parse(event.data));
    return true;
  };
  callbacks.on_done = [done](net::ClientResult) { done->set_value(); };
  client.Send({.method = "GET", .url = Url("/kv_events"), .timeout_ms = 0, .read_timeout_ms = 0}, std::move(callbacks));
  auto wait_for = [&](size_t num) {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(mu);
        if (received.size() >= num) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ASSERT_TRUE(wait_for(1));
  for (uint64_t hash = 6; hash < 56; ++hash) engine_.hub.Publish({{KvEvent::Type::kStored, {hash}}});
  ASSERT_TRUE(wait_for(51));
  {
    std::lock_guard lock(mu);
    EXPECT_TRUE(received[0]["snapshot"].get<bool>());
    EXPECT_EQ(received[0]["seq"], 1);
    EXPECT_EQ(received[0]["events"][1]["block_hashes"], json::array({"0000000000000005"}));
    for (size_t i = 1; i < received.size(); ++i) {
      EXPECT_EQ(received[i]["seq"], i + 1);
      EXPECT_FALSE(received[i]["snapshot"].get<bool>());
      EXPECT_EQ(received[i]["events"][0]["type"], "stored");
    }
  }
  EXPECT_EQ(engine_.hub.num_subscribers(), 1);
  server_->Shutdown(std::chrono::milliseconds(100));
  EXPECT_EQ(done->get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(engine_.hub.num_subscribers(), 0);
}

}  // namespace
}  // namespace surge
