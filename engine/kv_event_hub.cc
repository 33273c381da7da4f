#include "engine/kv_event_hub.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <unordered_set>
#include <utility>

#include "base/check.h"

namespace surge {

struct KvEventHub::State {
  struct Subscriber {
    std::function<void()> notify;
    std::deque<std::shared_ptr<const KvEventBatch>> buffered;
    size_t num_buffered_hashes = 0;
    bool needs_snapshot = true;  // at the start, and after a drop
    bool notified = false;       // a notify is out that no Poll has answered yet
    int64_t num_gaps = 0;
  };

  explicit State(KvEventHubOptions options) : options(options) {}

  // Under mu: the whole cache after batch `seq`.
  KvEventBatch Snapshot() const {
    KvEventBatch batch{seq, true, {{KvEvent::Type::kCleared, {}}}};
    batch.events.push_back({KvEvent::Type::kStored, std::vector<uint64_t>(cached.begin(), cached.end())});
    return batch;
  }

  const KvEventHubOptions options;
  mutable std::mutex mu;
  std::unordered_set<uint64_t> cached;  // guarded by mu: hashes stored and not evicted
  uint64_t seq = 0;                     // guarded by mu: the last batch's number
  std::vector<std::shared_ptr<Subscriber>> subscribers;  // guarded by mu
};

namespace {

size_t NumHashes(const KvEventBatch& batch) {
  size_t num = 0;
  for (const KvEvent& event : batch.events) num += event.block_hashes.size();
  return num;
}

class Subscription final : public KvEventSubscription {
 public:
  using State = KvEventHub::State;
  Subscription(std::shared_ptr<State> state, std::shared_ptr<State::Subscriber> self)
      : state_(std::move(state)), self_(std::move(self)) {}

  ~Subscription() override {
    std::lock_guard lock(state_->mu);
    std::erase(state_->subscribers, self_);
  }

  std::vector<KvEventBatch> Poll() override {
    std::vector<KvEventBatch> batches;
    std::lock_guard lock(state_->mu);
    self_->notified = false;
    if (self_->needs_snapshot) {
      // What was buffered is older than the snapshot, which already holds its effect.
      self_->needs_snapshot = false;
      self_->buffered.clear();
      self_->num_buffered_hashes = 0;
      batches.push_back(state_->Snapshot());
      return batches;
    }
    for (const auto& batch : self_->buffered) batches.push_back(*batch);
    self_->buffered.clear();
    self_->num_buffered_hashes = 0;
    return batches;
  }

  int64_t num_gaps() const override {
    std::lock_guard lock(state_->mu);
    return self_->num_gaps;
  }

 private:
  std::shared_ptr<State> state_;
  std::shared_ptr<State::Subscriber> self_;
};

}  // namespace

KvEventHub::KvEventHub(KvEventHubOptions options) : state_(std::make_shared<State>(options)) {
  CHECK_GT(options.max_buffered_hashes, size_t{0});
  CHECK_GT(options.max_subscribers, 0);
}

KvEventHub::~KvEventHub() = default;

void KvEventHub::Publish(std::vector<KvEvent> events) {
  if (events.empty()) return;
  std::vector<std::function<void()>> to_notify;
  {
    std::lock_guard lock(state_->mu);
    for (const KvEvent& event : events) {
      for (uint64_t hash : event.block_hashes) {
        if (event.type == KvEvent::Type::kStored) state_->cached.insert(hash);
        if (event.type == KvEvent::Type::kEvicted) state_->cached.erase(hash);
      }
      if (event.type == KvEvent::Type::kCleared) state_->cached.clear();
    }
    auto batch = std::make_shared<const KvEventBatch>(KvEventBatch{++state_->seq, false, std::move(events)});
    const size_t num_hashes = NumHashes(*batch);
    for (const auto& subscriber : state_->subscribers) {
      if (subscriber->needs_snapshot) {
        // Its snapshot will hold this batch too.
      } else if (subscriber->num_buffered_hashes + num_hashes > state_->options.max_buffered_hashes) {
        subscriber->buffered.clear();
        subscriber->num_buffered_hashes = 0;
        subscriber->needs_snapshot = true;
        ++subscriber->num_gaps;
      } else {
        subscriber->buffered.push_back(batch);
        subscriber->num_buffered_hashes += num_hashes;
      }
      if (!subscriber->notified) {
        subscriber->notified = true;
        to_notify.push_back(subscriber->notify);
      }
    }
  }
  for (const auto& notify : to_notify) {
    if (notify) notify();
  }
}

StatusOr<std::unique_ptr<KvEventSubscription>> KvEventHub::Subscribe(std::function<void()> notify) {
  auto subscriber = std::make_shared<State::Subscriber>();
  subscriber->notify = std::move(notify);
  {
    std::lock_guard lock(state_->mu);
    if (static_cast<int32_t>(state_->subscribers.size()) >= state_->options.max_subscribers) {
      return ResourceExhaustedError("too many KV event subscribers (at most " +
                                    std::to_string(state_->options.max_subscribers) + ")");
    }
    state_->subscribers.push_back(subscriber);
  }
  return std::unique_ptr<KvEventSubscription>(new Subscription(state_, std::move(subscriber)));
}

int32_t KvEventHub::num_subscribers() const {
  std::lock_guard lock(state_->mu);
  return static_cast<int32_t>(state_->subscribers.size());
}

int64_t KvEventHub::num_cached_blocks() const {
  std::lock_guard lock(state_->mu);
  return static_cast<int64_t>(state_->cached.size());
}

}  // namespace surge
