#include "batch/line_dispatcher.h"

#include <algorithm>
#include <utility>

#include "base/json_access.h"
#include "base/logging.h"
#include "batch/ids.h"
#include "net/http_client.h"

namespace surge::batch {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kFirstBackoffMs = 100;
constexpr int kMaxAnswerDepth = 128;  // deeper answers are not walked (no usage read)

// 429 and 503 say "full, come back later": batch work waits, it does not fail.
bool IsOverload(const LineAnswer& answer) { return answer.status_code == 429 || answer.status_code == 503; }

}  // namespace

// Latency per generated token: comparable across lines of different lengths. The answer is
// the engine's: a usage of the wrong type or out of range (a string, 1e300) counts as no
// tokens instead of throwing or casting out of range.
double AnswerCostMs(const LineAnswer& answer, int64_t latency_ms) {
  int64_t tokens = 0;
  StatusOr<json::Json> body = json::Parse(answer.body, "answer", kMaxAnswerDepth, answer.body.size());
  const json::Json* usage = nullptr;
  if (body.ok() && body->is_object() && json::ObjectReader(*body, "answer").Object("usage", &usage).ok() && usage) {
    if (!json::ObjectReader(*usage, "usage").Int("completion_tokens", 0, int64_t{1} << 40, &tokens).ok()) tokens = 0;
  }
  return static_cast<double>(latency_ms) / static_cast<double>(std::max<int64_t>(1, tokens));
}

LineDispatcher::LineDispatcher(DispatchOptions options, OnDone on_done)
    : options_(std::move(options)),
      on_done_(std::move(on_done)),
      client_(std::make_unique<net::HttpClient>()),
      window_(options_.max_in_flight) {
  thread_.Start([this] { return Dispatch(); });
}

LineDispatcher::~LineDispatcher() { Stop(); }

void LineDispatcher::Stop() {
  if (thread_.stopping()) return;
  thread_.Stop();
  client_.reset();  // in-flight requests end CANCELLED; OnAnswer drops them
}

void LineDispatcher::Enqueue(std::vector<DispatchedLine> lines) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (DispatchedLine& line : lines) {
      ++outstanding_[line.owner];
      queue_.push_back({std::move(line)});
    }
  }
  thread_.Wake();
}

void LineDispatcher::DropQueued(std::string_view owner) {
  std::lock_guard<std::mutex> lock(mu_);
  auto dropped = [&](const Pending& p) { return p.line.owner == owner; };
  const int64_t num_dropped = std::count_if(queue_.begin(), queue_.end(), dropped) +
                              std::count_if(backing_off_.begin(), backing_off_.end(), dropped);
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(), dropped), queue_.end());
  backing_off_.erase(std::remove_if(backing_off_.begin(), backing_off_.end(), dropped), backing_off_.end());
  auto it = outstanding_.find(owner);
  if (it != outstanding_.end() && (it->second -= num_dropped) <= 0) outstanding_.erase(it);
}

int64_t LineDispatcher::NumOutstanding(std::string_view owner) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = outstanding_.find(owner);
  return it == outstanding_.end() ? 0 : it->second;
}

int64_t LineDispatcher::NumQueued(std::string_view owner) const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::count_if(queue_.begin(), queue_.end(), [&](const Pending& p) { return p.line.owner == owner; });
}

int LineDispatcher::window_limit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return window_.limit();
}

// Moves retries that are due to the front of the queue, sends while the window has room,
// and sleeps until the next retry is due or something changes (a Wake).
PeriodicThread::Duration LineDispatcher::Dispatch() {
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::time_point now = Clock::now();
  Clock::time_point next_due = now + std::chrono::seconds(1);
  for (auto it = backing_off_.begin(); it != backing_off_.end();) {
    if (it->not_before <= now) {
      queue_.push_front(std::move(*it));
      it = backing_off_.erase(it);
    } else {
      next_due = std::min(next_due, it->not_before);
      ++it;
    }
  }
  while (num_in_flight_ < window_.limit() && !queue_.empty()) {
    Pending pending = std::move(queue_.front());
    queue_.pop_front();
    SendLocked(std::move(pending));
  }
  return next_due - now;
}

void LineDispatcher::SendLocked(Pending pending) {
  ++num_in_flight_;
  ++pending.num_attempts;
  net::ClientRequest request{.method = "POST",
                             .url = options_.base_url + pending.line.line.url,
                             .headers = {{"Content-Type", "application/json"}, {"X-Priority", "batch"}},
                             .body = pending.line.line.body,
                             .timeout_ms = options_.request_timeout_ms,
                             .read_timeout_ms = options_.request_timeout_ms};
  const Clock::time_point start = Clock::now();
  auto shared = std::make_shared<Pending>(std::move(pending));
  net::ClientCallbacks callbacks;
  callbacks.on_done = [this, shared, start](net::ClientResult result) {
    if (result.status.code() == StatusCode::kCancelled) return;  // Stop()
    LineAnswer answer{result.status, result.response.status, result.response.headers.Get("x-request-id"),
                      std::move(result.response.body)};
    if (answer.request_id.empty()) answer.request_id = NewId("req_");
    const int64_t latency_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    OnAnswer(std::move(*shared), std::move(answer), latency_ms);
  };
  client_->Send(std::move(request), std::move(callbacks));
}

void LineDispatcher::OnAnswer(Pending pending, LineAnswer answer, int64_t latency_ms) {
  const bool transport_failed = !answer.transport.ok();
  const bool retry = IsOverload(answer) || (transport_failed && pending.num_attempts < options_.max_transport_attempts);
  {
    std::lock_guard<std::mutex> lock(mu_);
    --num_in_flight_;
    if (IsOverload(answer) || transport_failed) {
      window_.OnOverload();
    } else {
      window_.OnAnswer(AnswerCostMs(answer, latency_ms));
    }
    if (retry) {
      const int64_t backoff_ms =
          std::min(options_.max_backoff_ms, kFirstBackoffMs << std::min(pending.num_attempts - 1, 10));
      pending.not_before = Clock::now() + std::chrono::milliseconds(backoff_ms);
      backing_off_.push_back(std::move(pending));
    }
  }
  thread_.Wake();
  if (retry) return;
  if (transport_failed) {
    LOG(WARNING) << "batch line " << pending.line.line.custom_id << " failed: " << answer.transport.message();
  }
  on_done_(pending.line, answer);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = outstanding_.find(pending.line.owner);
  if (it != outstanding_.end() && --it->second <= 0) outstanding_.erase(it);
}

}  // namespace surge::batch
