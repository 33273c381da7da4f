#include "router/prefix/kv_event_subscriber.h"

#include <algorithm>
#include <chrono>

#include "base/check.h"
#include "base/logging.h"
#include "net/http_client.h"
#include "net/sse.h"

namespace surge::router {

// What one connection's callbacks share with the subscriber thread: they may run on the
// client's io thread until the client is destroyed.
struct KvEventSubscriber::Exchange {
  explicit Exchange(size_t max_event_bytes) : parser(max_event_bytes) {}
  net::SseParser parser;          // io thread only
  std::atomic<bool> began{false};    // HTTP 200: the stream is on
  std::atomic<bool> applied{false};  // a batch was applied: the back-off starts over
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // guarded by mu
};

KvEventSubscriber::KvEventSubscriber(std::string base_url, BlockIndex& index, KvEventSubscriberOptions options,
                                     std::function<void(const KvEventBatch&)> on_batch)
    : base_url_(std::move(base_url)), index_(index), options_(options), on_batch_(std::move(on_batch)) {}

KvEventSubscriber::~KvEventSubscriber() { Stop(); }

void KvEventSubscriber::Start() {
  client_ = std::make_unique<net::HttpClient>();
  backoff_ms_ = options_.retry_initial_ms;
  thread_.Start([this] { return Attempt(); });
}

void KvEventSubscriber::Stop() {
  thread_.Stop();
  client_.reset();  // cancels the stream; its callbacks have run when this returns
  connected_ = false;
}

PeriodicThread::Duration KvEventSubscriber::Attempt() {
  if (StreamOnce()) backoff_ms_ = options_.retry_initial_ms;  // it worked for a while
  const int64_t wait_ms = backoff_ms_;
  backoff_ms_ = std::min(backoff_ms_ * 2, options_.retry_max_ms);
  return std::chrono::milliseconds(wait_ms);
}

// Body bytes of a 200 stream: every complete event is parsed and applied. False drops
// the connection (malformed, too big, or a gap).
bool KvEventSubscriber::OnData(Exchange& exchange, std::string_view data) {
  std::vector<net::SseEvent> events;
  if (Status status = exchange.parser.Feed(data, &events); !status.ok()) return false;
  for (const net::SseEvent& event : events) {
    StatusOr<KvEventBatch> batch = ParseKvEventBatch(event.data, options_.max_batch_hashes);
    if (!batch.ok()) {
      LOG(WARNING) << base_url_ << "/kv_events: " << batch.status().ToString();
      if (options_.on_refused) options_.on_refused(batch.status());
      return false;
    }
    if (!index_.Apply(*batch)) return false;  // a gap: reconnect for a snapshot
    exchange.applied = true;
    if (on_batch_) on_batch_(*batch);
  }
  return true;
}

bool KvEventSubscriber::StreamOnce() {
  // Each hash takes 19 bytes in the JSON; a snapshot of max_batch_hashes must fit.
  auto exchange = std::make_shared<Exchange>(options_.max_batch_hashes * 20 + 4096);
  net::ClientRequest request{.method = "GET", .url = base_url_ + "/kv_events", .timeout_ms = 0, .read_timeout_ms = 0};
  net::ClientCallbacks callbacks;
  callbacks.on_head = [this, exchange](const net::HttpResponse& head) {
    if (head.status != 200) return;
    exchange->began = true;
    connected_ = true;
    ++num_connects_;
  };
  callbacks.on_data = [this, exchange](std::string_view data, net::SteadyTime) {
    return !exchange->began || OnData(*exchange, data);  // an error body is read to its end
  };
  callbacks.on_done = [this, exchange](net::ClientResult) {
    connected_ = false;
    std::lock_guard lock(exchange->mu);
    exchange->done = true;
    exchange->cv.notify_all();
  };
  client_->Send(std::move(request), std::move(callbacks));
  // Wake on the stream's end or on Stop, whichever comes first.
  for (;;) {
    {
      std::unique_lock lock(exchange->mu);
      if (exchange->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return exchange->done; })) break;
    }
    if (thread_.stopping()) break;
  }
  return exchange->applied;
}

}  // namespace surge::router
