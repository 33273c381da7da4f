#include "obs/span_exporter.h"

#include <chrono>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

namespace surge::obs {
namespace {

using Clock = std::chrono::steady_clock;

SpanData Span(int i) {
  SpanData span;
  span.trace_id = RandomTraceId();
  span.span_id = RandomSpanId();
  span.name = "span" + std::to_string(i);
  span.trace_flags = kSampledFlag;
  return span;
}

// A collector that answers from a script and remembers what it got.
struct FakeCollector {
  std::mutex mu;
  std::vector<std::string> bodies;
  std::vector<std::string> content_types;
  std::vector<StatusOr<int>> answers;  // one per call, then 200
  size_t num_calls = 0;

  OtlpSendFunction Send() {
    return [this](std::string_view content_type, const std::string& body) -> StatusOr<int> {
      std::lock_guard<std::mutex> lock(mu);
      bodies.push_back(body);
      content_types.emplace_back(content_type);
      return num_calls < answers.size() ? answers[num_calls++] : StatusOr<int>(200);
    };
  }
};

SpanExporterOptions FastOptions() {
  SpanExporterOptions options;
  options.batch_timeout_ms = 20;
  options.initial_backoff_ms = 1;
  options.max_backoff_ms = 4;
  return options;
}

TEST(SpanExporterTest, BatchesBySize) {
  FakeCollector collector;
  SpanExporterOptions options = FastOptions();
  options.max_batch_spans = 3;
  options.batch_timeout_ms = 60'000;  // only the size can send before Shutdown
  SpanExporter exporter(options, collector.Send());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(exporter.Record(Span(i)));
  const Clock::time_point until = Clock::now() + std::chrono::seconds(5);
  while (exporter.stats().num_exported < 3 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(exporter.stats().num_exported, 3);
  EXPECT_EQ(collector.bodies.size(), 1u);
  EXPECT_EQ(collector.content_types[0], "application/x-protobuf");
}

TEST(SpanExporterTest, BatchesByTime) {
  FakeCollector collector;
  SpanExporterOptions options = FastOptions();
  options.protocol = OtlpProtocol::kHttpJson;
  SpanExporter exporter(options, collector.Send());
  const Clock::time_point start = Clock::now();
  exporter.Record(Span(0));
  while (exporter.stats().num_exported < 1 && Clock::now() - start < std::chrono::seconds(5)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(exporter.stats().num_exported, 1);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(options.batch_timeout_ms));
  EXPECT_EQ(collector.content_types.at(0), "application/json");
  EXPECT_NE(collector.bodies.at(0).find("\"span0\""), std::string::npos);
}

TEST(SpanExporterTest, RetriesUnavailableAndServerErrorsThenSucceeds) {
  FakeCollector collector;
  collector.answers = {UnavailableError("connection refused"), 503, 429};
  SpanExporter exporter(FastOptions(), collector.Send());
  exporter.Record(Span(0));
  exporter.Shutdown();
  EXPECT_EQ(collector.bodies.size(), 4u);
  EXPECT_EQ(collector.bodies[0], collector.bodies[3]);  // the same batch again
  EXPECT_EQ(exporter.stats().num_exported, 1);
  EXPECT_EQ(exporter.stats().num_failed, 0);
}

TEST(SpanExporterTest, GivesUpAfterMaxAttemptsAndOnClientErrors) {
  FakeCollector collector;
  collector.answers = {500, 500, 500, 500, 400};
  SpanExporterOptions options = FastOptions();
  options.max_batch_spans = 2;
  SpanExporter exporter(options, collector.Send());
  exporter.Record(Span(0));
  exporter.Record(Span(1));  // a full batch: four 500s, then failed
  exporter.Shutdown();
  EXPECT_EQ(exporter.stats().num_failed, 2);
  EXPECT_EQ(collector.bodies.size(), 4u);

  FakeCollector refusing;
  refusing.answers = {400};
  SpanExporter second(FastOptions(), refusing.Send());
  second.Record(Span(0));
  second.Shutdown();
  EXPECT_EQ(refusing.bodies.size(), 1u);  // 400 is not retried
  EXPECT_EQ(second.stats().num_failed, 1);
}

// The collector hangs: the queue fills, later spans are dropped and counted, and Record
// returns at once all along.
TEST(SpanExporterTest, FullQueueDropsAndCountsWithoutBlocking) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<bool> sending{false};
  SpanExporterOptions options = FastOptions();
  options.max_queue_spans = 100;
  options.max_batch_spans = 10;
  options.batch_timeout_ms = 0;
  options.shutdown_timeout_ms = 0;
  SpanExporter exporter(options, [&](std::string_view, const std::string&) -> StatusOr<int> {
    sending = true;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
    return 200;
  });
  exporter.Record(Span(-1));  // taken by the thread, which then hangs in send
  while (!sending) std::this_thread::yield();
  const Clock::time_point start = Clock::now();
  int num_accepted = 0;
  for (int i = 0; i < 10'000; ++i) num_accepted += exporter.Record(Span(i));
  const auto elapsed = Clock::now() - start;
  EXPECT_EQ(num_accepted, 100);
  EXPECT_EQ(exporter.stats().num_dropped, 10'000 - 100);
  // 10,000 records (span ids drawn, a lock, a push or a count) in well under 200 ms.
  EXPECT_LT(elapsed, std::chrono::milliseconds(200));
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  exporter.Shutdown();
  const SpanExporterStats stats = exporter.stats();
  // What was queued when Shutdown came had no time left (shutdown_timeout_ms 0): dropped.
  EXPECT_EQ(stats.num_exported + stats.num_dropped + stats.num_failed, 10'001);
}

TEST(SpanExporterTest, ShutdownSendsWhatIsQueuedAndLaterRecordsAreDropped) {
  FakeCollector collector;
  SpanExporterOptions options = FastOptions();
  options.batch_timeout_ms = 60'000;
  SpanExporter exporter(options, collector.Send());
  for (int i = 0; i < 5; ++i) exporter.Record(Span(i));
  exporter.Shutdown();
  EXPECT_EQ(exporter.stats().num_exported, 5);
  EXPECT_FALSE(exporter.Record(Span(5)));
  EXPECT_EQ(exporter.stats().num_dropped, 1);
}

// A collector that never answers does not hold Shutdown past its retries' budget.
TEST(SpanExporterTest, ShutdownIsBoundedWhenTheCollectorIsDown) {
  SpanExporterOptions options = FastOptions();
  options.max_attempts = 100;
  options.initial_backoff_ms = 50;
  options.max_backoff_ms = 50;
  options.shutdown_timeout_ms = 100;
  SpanExporter exporter(options, [](std::string_view, const std::string&) -> StatusOr<int> {
    return UnavailableError("connection refused");
  });
  exporter.Record(Span(0));
  const Clock::time_point start = Clock::now();
  exporter.Shutdown();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(exporter.stats().num_failed, 1);
}

}  // namespace
}  // namespace surge::obs
