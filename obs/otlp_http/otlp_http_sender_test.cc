#include "obs/otlp_http/otlp_http_sender.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "net/http_server.h"
#include "net/test_util.h"
#include "obs/span_exporter.h"

namespace surge::obs {
namespace {

using Clock = std::chrono::steady_clock;

// A collector on 127.0.0.1 that answers each POST /v1/traces with the next scripted
// status (then 200) and keeps what it was sent.
class TestCollector {
 public:
  explicit TestCollector(std::vector<int> statuses = {}) : statuses_(std::move(statuses)) {
    server_.Route("POST", "/v1/traces", [this](net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) {
      int status = 200;
      {
        std::lock_guard<std::mutex> lock(mu_);
        bodies_.push_back(request.body);
        content_types_.push_back(request.headers.Get("Content-Type"));
        if (next_ < statuses_.size()) status = statuses_[next_++];
      }
      writer->Send(status, {{"Content-Type", "application/x-protobuf"}}, "");
    });
    EXPECT_TRUE(server_.Start().ok());
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_.port()) + "/v1/traces"; }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> content_types() {
    std::lock_guard<std::mutex> lock(mu_);
    return content_types_;
  }

 private:
  net::HttpServer server_;
  std::mutex mu_;
  std::vector<int> statuses_;
  size_t next_ = 0;
  std::vector<std::string> bodies_;
  std::vector<std::string> content_types_;
};

SpanData Span() {
  SpanData span;
  span.trace_id = RandomTraceId();
  span.span_id = RandomSpanId();
  span.name = "request";
  span.trace_flags = kSampledFlag;
  return span;
}

TEST(OtlpHttpSenderTest, PostsTheBodyWithItsContentType) {
  TestCollector collector;
  StatusOr<OtlpSendFunction> send = MakeOtlpHttpSender(collector.url());
  ASSERT_TRUE(send.ok()) << send.status().message();
  StatusOr<int> answer = (*send)("application/x-protobuf", std::string("\x0a\x00", 2));
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_EQ(*answer, 200);
  ASSERT_EQ(collector.bodies().size(), 1u);
  EXPECT_EQ(collector.bodies()[0], std::string("\x0a\x00", 2));
  EXPECT_EQ(collector.content_types()[0], "application/x-protobuf");
}

TEST(OtlpHttpSenderTest, ABaseUrlGetsTheTracesPath) {
  TestCollector collector;
  const std::string base = collector.url().substr(0, collector.url().size() - std::string("/v1/traces").size());
  StatusOr<OtlpSendFunction> send = MakeOtlpHttpSender(base);
  ASSERT_TRUE(send.ok());
  EXPECT_EQ(*(*send)("application/json", "{}"), 200);
}

TEST(OtlpHttpSenderTest, RefusesUrlsItCannotUse) {
  EXPECT_FALSE(MakeOtlpHttpSender("https://collector:4318/v1/traces").ok());
  EXPECT_FALSE(MakeOtlpHttpSender("collector:4318").ok());
}

TEST(OtlpHttpSenderTest, NoCollectorIsAnErrorStatus) {
  StatusOr<OtlpSendFunction> send =
      MakeOtlpHttpSender("http://127.0.0.1:" + std::to_string(net::testing::UnusedPort()) + "/v1/traces");
  ASSERT_TRUE(send.ok());
  EXPECT_FALSE((*send)("application/json", "{}").ok());
}

TEST(OtlpHttpExportTest, RetriesA503ThroughTheRealClient) {
  TestCollector collector({503, 429});
  SpanExporterOptions options;
  options.batch_timeout_ms = 1;
  options.initial_backoff_ms = 1;
  SpanExporter exporter(options, *MakeOtlpHttpSender(collector.url()));
  exporter.Record(Span());
  exporter.Shutdown();
  EXPECT_EQ(collector.bodies().size(), 3u);
  EXPECT_EQ(exporter.stats().num_exported, 1);
}

// Collector down: the exporter retries connect errors in the background while a burst
// of Record calls returns at once; what does not fit is dropped and counted.
TEST(OtlpHttpExportTest, CollectorDownNeverBlocksTheCaller) {
  SpanExporterOptions options;
  options.max_queue_spans = 256;
  options.batch_timeout_ms = 1;
  options.shutdown_timeout_ms = 200;
  SpanExporter exporter(options, *MakeOtlpHttpSender("http://127.0.0.1:" +
                                                     std::to_string(net::testing::UnusedPort()) + "/v1/traces"));
  std::vector<SpanData> spans(5000);
  for (SpanData& span : spans) span = Span();
  Clock::duration slowest{};
  const Clock::time_point start = Clock::now();
  for (SpanData& span : spans) {
    const Clock::time_point before = Clock::now();
    exporter.Record(std::move(span));
    slowest = std::max(slowest, Clock::now() - before);
  }
  const auto elapsed = Clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::milliseconds(100));
  EXPECT_LT(slowest, std::chrono::milliseconds(20));  // no call waited on the network
  EXPECT_GE(exporter.stats().num_dropped, 5000 - 256 - 512);
  exporter.Shutdown();
  EXPECT_EQ(exporter.stats().num_exported, 0);
}

}  // namespace
}  // namespace surge::obs
