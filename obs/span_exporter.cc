#include "obs/span_exporter.h"

#include <algorithm>
#include <utility>

#include "base/check.h"

namespace surge::obs {
namespace {

using Clock = std::chrono::steady_clock;

// 429 and 5xx may pass (OTLP/HTTP says 429, 502, 503, 504; other 5xx are retried too,
// within the same bound); any other status will not change on a retry.
bool Retryable(const StatusOr<int>& answer) {
  if (!answer.ok()) return true;
  return *answer == 429 || *answer >= 500;
}

}  // namespace

SpanExporter::SpanExporter(SpanExporterOptions options, OtlpSendFunction send)
    : options_(std::move(options)), send_(std::move(send)) {
  CHECK(options_.max_queue_spans >= 1 && options_.max_batch_spans >= 1);
  CHECK(options_.batch_timeout_ms >= 0 && options_.max_attempts >= 1 && options_.initial_backoff_ms >= 0);
  thread_ = std::thread([this] { Run(); });
}

SpanExporter::~SpanExporter() { Shutdown(); }

bool SpanExporter::Record(SpanData span) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && queue_.size() < options_.max_queue_spans) {
      queue_.push_back(std::move(span));
      // Wake the thread when a batch starts (its timer) or fills; not for every span.
      if (queue_.size() == 1 || queue_.size() == options_.max_batch_spans) cv_.notify_one();
      return true;
    }
  }
  num_dropped_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void SpanExporter::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) return;
    if (!stopping_) {
      stopping_ = true;
      deadline_ = Clock::now() + std::chrono::milliseconds(options_.shutdown_timeout_ms);
    }
  }
  cv_.notify_all();
  thread_.join();
}

SpanExporterStats SpanExporter::stats() const {
  return {num_exported_.load(std::memory_order_relaxed), num_dropped_.load(std::memory_order_relaxed),
          num_failed_.load(std::memory_order_relaxed)};
}

size_t SpanExporter::num_pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() + num_sending_;
}

void SpanExporter::Run() {
  while (true) {
    std::vector<SpanData> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      batch = NextBatch(lock);
      if (batch.empty()) return;
      num_sending_ = batch.size();
    }
    const bool accepted = Export(batch);
    (accepted ? num_exported_ : num_failed_).fetch_add(static_cast<int64_t>(batch.size()));
    std::lock_guard<std::mutex> lock(mu_);
    num_sending_ = 0;
  }
}

std::vector<SpanData> SpanExporter::NextBatch(std::unique_lock<std::mutex>& lock) {
  cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
  if (!stopping_) {
    // The batch's first span just came: collect for up to batch_timeout_ms.
    const Clock::time_point due = Clock::now() + std::chrono::milliseconds(options_.batch_timeout_ms);
    cv_.wait_until(lock, due, [&] { return stopping_ || queue_.size() >= options_.max_batch_spans; });
  }
  if (stopping_ && Clock::now() >= deadline_) {
    // Shutdown's time is spent: what is left will never be sent.
    num_dropped_.fetch_add(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    queue_.clear();
  }
  const size_t size = std::min(queue_.size(), options_.max_batch_spans);
  std::vector<SpanData> batch(std::make_move_iterator(queue_.begin()),
                              std::make_move_iterator(queue_.begin() + static_cast<std::ptrdiff_t>(size)));
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(size));
  return batch;
}

bool SpanExporter::Export(const std::vector<SpanData>& batch) {
  const std::string body = EncodeOtlp(options_.protocol, options_.resource, batch);
  const std::string_view content_type = OtlpContentType(options_.protocol);
  int64_t backoff_ms = options_.initial_backoff_ms;
  for (int attempt = 1;; ++attempt) {
    const StatusOr<int> answer = send_(content_type, body);
    if (answer.ok() && *answer >= 200 && *answer < 300) return true;
    if (!Retryable(answer) || attempt == options_.max_attempts || !Backoff(backoff_ms)) return false;
    backoff_ms = std::min(backoff_ms * 2, options_.max_backoff_ms);
  }
}

bool SpanExporter::Backoff(int64_t ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stopping_; });
  return !stopping_ || Clock::now() < deadline_;
}

}  // namespace surge::obs
