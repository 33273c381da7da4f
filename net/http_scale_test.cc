// Thousands of connections open at once against one server thread.
#include <gtest/gtest.h>

#include <future>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/test_util.h"

namespace surge::net {
namespace {

TEST(HttpScaleTest, TwoThousandConcurrentConnections) {
  constexpr int kNumConnections = 2000;
  // Both ends live in this process: two descriptors per connection, plus slack.
  if (!testing::RaiseFileLimit(2 * kNumConnections + 512)) {
    GTEST_SKIP() << "RLIMIT_NOFILE hard limit too low for " << kNumConnections << " connections";
  }
  HttpServer server;
  // Every request is held until all of them have arrived, so all connections are open
  // at the same moment; then all are answered. Handlers run on the one io thread, so the
  // vector needs no lock.
  std::vector<std::shared_ptr<ResponseWriter>> held;
  int64_t open_when_full = 0;
  server.Route("POST", "/v1/completions", [&](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
    writer->OnClose([] {});
    held.push_back(std::move(writer));
    if (held.size() < kNumConnections) return;
    open_when_full = server.num_open_connections();
    for (auto& waiting : held) waiting->SendJson(200, "{\"ok\":true}");
    held.clear();
  });
  ASSERT_TRUE(server.Start().ok());

  HttpClient client({.max_idle_connections_per_host = kNumConnections});
  std::atomic<int> num_ok{0};
  std::atomic<int> num_done{0};
  std::promise<void> all_done;
  std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/v1/completions";
  for (int i = 0; i < kNumConnections; ++i) {
    ClientCallbacks callbacks;
    callbacks.on_done = [&](ClientResult result) {
      if (result.status.ok() && result.response.status == 200) ++num_ok;
      if (!result.status.ok()) ADD_FAILURE() << result.status.ToString();
      if (++num_done == kNumConnections) all_done.set_value();
    };
    client.Send({.method = "POST", .url = url, .body = "{}", .timeout_ms = 8000}, callbacks);
  }
  ASSERT_EQ(all_done.get_future().wait_for(std::chrono::seconds(9)), std::future_status::ready);
  EXPECT_EQ(num_ok.load(), kNumConnections);
  EXPECT_EQ(open_when_full, kNumConnections);
  EXPECT_EQ(server.num_accepted_connections(), kNumConnections);
  EXPECT_EQ(client.num_connections_opened(), kNumConnections);
}

}  // namespace
}  // namespace surge::net
