// KvEventSubscriber: keeps one backend's BlockIndex exact (precise mode) from the
// engine's GET /kv_events stream, on a client of its own. A connection starts with a
// snapshot; a gap in the numbering or a malformed batch drops the connection, and every
// drop is followed by a reconnect with exponential back-off. While disconnected the index
// keeps what it knew (approximately right) until the next snapshot replaces it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/periodic_thread.h"
#include "base/status.h"
#include "router/prefix/block_index.h"

namespace surge::net {
class HttpClient;
}  // namespace surge::net

namespace surge::router {

struct KvEventSubscriberOptions {
  int64_t retry_initial_ms = 100;
  int64_t retry_max_ms = 5'000;
  size_t max_batch_hashes = size_t{1} << 22;  // a bigger batch (or snapshot) is refused
  // Called (on the client's io thread) with why a batch was refused, before the connection
  // is dropped: the router counts it (surge_router_backend_bad_answers_total).
  std::function<void(const Status&)> on_refused = nullptr;
};

class KvEventSubscriber {
 public:
  // `base_url` is the engine's ("http://127.0.0.1:8000"); `index` is borrowed and must
  // outlive the subscriber. `on_batch` (optional) sees every batch applied, on the
  // client's io thread, after the index has it.
  KvEventSubscriber(std::string base_url, BlockIndex& index, KvEventSubscriberOptions options = {},
                    std::function<void(const KvEventBatch&)> on_batch = nullptr);
  ~KvEventSubscriber();  // Stop()
  KvEventSubscriber(const KvEventSubscriber&) = delete;
  KvEventSubscriber& operator=(const KvEventSubscriber&) = delete;

  void Start();
  // Ends the stream and joins; the index is no longer written once it returns. Idempotent.
  void Stop();

  bool connected() const { return connected_; }
  int64_t num_connects() const { return num_connects_; }  // streams that began (HTTP 200)

 private:
  struct Exchange;
  // One connection, then the back-off before the next (doubling up to retry_max_ms).
  PeriodicThread::Duration Attempt();
  // Streams until the connection ends or Stop; true when it applied a batch.
  bool StreamOnce();
  bool OnData(Exchange& exchange, std::string_view data);

  const std::string base_url_;
  BlockIndex& index_;
  const KvEventSubscriberOptions options_;
  const std::function<void(const KvEventBatch&)> on_batch_;
  std::unique_ptr<net::HttpClient> client_;
  int64_t backoff_ms_ = 0;  // the thread's own
  std::atomic<bool> connected_{false};
  std::atomic<int64_t> num_connects_{0};
  PeriodicThread thread_;
};

}  // namespace surge::router
