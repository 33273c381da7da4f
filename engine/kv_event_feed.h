// KvEventFeed: the prefix cache's changes (kv/, recorded as it makes them) turned into the
// KvEvent runs that GET /kv_events subscribers read from the hub (kv_event_hub.h). The
// engine feeds it after every step, before it publishes the outputs, so that whoever sees
// a stream end can already see the blocks it stored.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "base/status.h"
#include "engine/kv_event_hub.h"
#include "kv/kv_cache_manager.h"

namespace surge {

class KvEventFeed {
 public:
  // Engine thread: takes `kv`'s recorded changes and publishes them, consecutive changes
  // of one kind as one event. Nothing when there are none.
  void Feed(KvCacheManager& kv);
  // Any thread (KvEventHub::Subscribe).
  StatusOr<std::unique_ptr<KvEventSubscription>> Subscribe(std::function<void()> notify) {
    return hub_.Subscribe(std::move(notify));
  }

 private:
  KvEventHub hub_;
  std::vector<PrefixCacheEvent> changes_;  // engine thread: reused by Feed
};

}  // namespace surge
