// SpanExporter: batches finished spans on a background thread and sends them as OTLP
// (protobuf or JSON) through an injected send function, with bounded retries. Record
// never blocks: when the bounded queue is full the span is dropped and counted.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "base/status.h"
#include "obs/otlp_encoder.h"
#include "obs/span.h"

namespace surge::obs {

// POSTs one encoded request body. Returns the HTTP status of the answer, or an error
// Status when none came (connect failure, timeout): those are retried. Called on the
// exporter's thread only; it may block (up to its own timeout).
using OtlpSendFunction = std::function<StatusOr<int>(std::string_view content_type, const std::string& body)>;

struct SpanExporterOptions {
  OtlpProtocol protocol = OtlpProtocol::kHttpProtobuf;
  OtlpResource resource;
  size_t max_queue_spans = 2048;     // spans waiting; past it Record drops
  size_t max_batch_spans = 512;      // a batch goes out once this many wait ...
  int64_t batch_timeout_ms = 1000;   // ... or when the oldest waited this long
  int max_attempts = 4;              // sends of one batch: retries on 429, 5xx, no answer
  int64_t initial_backoff_ms = 100;  // doubled after each failed attempt
  int64_t max_backoff_ms = 2000;
  int64_t shutdown_timeout_ms = 2000;  // Shutdown's budget to send what is queued
};

// Totals in spans since start; they only grow.
struct SpanExporterStats {
  int64_t num_exported = 0;  // accepted by the collector (2xx)
  int64_t num_dropped = 0;   // refused by Record: queue full, or after Shutdown
  int64_t num_failed = 0;    // sent but never accepted: retries spent or a non-retryable status
};

class SpanExporter {
 public:
  // Starts the background thread. Options out of range are a bug (CHECK).
  SpanExporter(SpanExporterOptions options, OtlpSendFunction send);
  ~SpanExporter();  // Shutdown()
  SpanExporter(const SpanExporter&) = delete;
  SpanExporter& operator=(const SpanExporter&) = delete;

  // Queues `span`; false (and counted as dropped) when the queue is full or the exporter
  // shut down. Takes a lock held only for a push or a swap: never waits on the network.
  bool Record(SpanData span);
  // Sends what is queued (within shutdown_timeout_ms, no retries after it), then joins
  // the thread. Idempotent.
  void Shutdown();

  SpanExporterStats stats() const;
  // Spans queued or in the batch being sent (tests).
  size_t num_pending() const;

 private:
  void Run();
  // Takes up to max_batch_spans queued spans once a batch is due; empty when stopping
  // with nothing left. Called with `lock` held.
  std::vector<SpanData> NextBatch(std::unique_lock<std::mutex>& lock);
  // Sends one batch with retries; returns true when accepted.
  bool Export(const std::vector<SpanData>& batch);
  // Waits `ms` unless the exporter is told to stop; false when it was.
  bool Backoff(int64_t ms);

  const SpanExporterOptions options_;
  const OtlpSendFunction send_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SpanData> queue_;  // guarded by mu_
  size_t num_sending_ = 0;      // guarded by mu_: spans of the batch in flight
  bool stopping_ = false;       // guarded by mu_
  std::chrono::steady_clock::time_point deadline_{};  // guarded by mu_: shutdown's end
  std::atomic<int64_t> num_exported_{0};
  std::atomic<int64_t> num_dropped_{0};
  std::atomic<int64_t> num_failed_{0};
  std::thread thread_;
};

}  // namespace surge::obs
