#include "engine/kv_event_feed.h"

#include <utility>

namespace surge {

void KvEventFeed::Feed(KvCacheManager& kv) {
  if (!kv.has_events()) return;
  changes_.clear();
  kv.TakeEvents(&changes_);
  std::vector<KvEvent> events;
  for (const PrefixCacheEvent& change : changes_) {
    const KvEvent::Type type =
        change.kind == PrefixCacheEvent::Kind::kStored ? KvEvent::Type::kStored : KvEvent::Type::kEvicted;
    if (events.empty() || events.back().type != type) events.push_back({type, {}});
    events.back().block_hashes.push_back(change.hash);
  }
  hub_.Publish(std::move(events));
}

}  // namespace surge
