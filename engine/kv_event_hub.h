// KvEventHub: fans the prefix cache's changes out from the engine thread to any number of
// subscribers (GET /kv_events), each with a bounded buffer. The engine thread never waits
// on a subscriber: past its bound a subscriber's buffer is dropped and replaced by one
// snapshot of the whole cache, so it is exact again without reconnecting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/status.h"
#include "engine/engine_client.h"

namespace surge {

struct KvEventHubOptions {
  size_t max_buffered_hashes = size_t{1} << 16;  // per subscriber, before it is dropped
  int32_t max_subscribers = 16;
};

class KvEventHub {
 public:
  explicit KvEventHub(KvEventHubOptions options = {});
  ~KvEventHub();
  KvEventHub(const KvEventHub&) = delete;
  KvEventHub& operator=(const KvEventHub&) = delete;

  // Engine thread: one step's changes (runs of kStored / kEvicted) become the next batch;
  // nothing when `events` is empty. Costs one short lock and no copy per subscriber.
  void Publish(std::vector<KvEvent> events);
  // Any thread. The subscription's first Poll returns a snapshot. It may outlive the hub.
  StatusOr<std::unique_ptr<KvEventSubscription>> Subscribe(std::function<void()> notify);

  int32_t num_subscribers() const;
  int64_t num_cached_blocks() const;  // the hub's own mirror of the cache, for tests

  struct State;  // shared with the subscriptions, which may outlive the hub

 private:
  std::shared_ptr<State> state_;
};

}  // namespace surge
