// DedupWindow: the messages seen lately, by dedup key (message_id, else correlation_id), so
// that a redelivery (at-least-once: the broker resends what was not acked when a connection
// dropped) never runs twice. A key is running (its request is in flight) or done (its reply
// is kept, to publish again when the message comes back). Done keys are forgotten after
// `ttl_ms` or past `max_entries` (oldest first); running keys are never forgotten.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>

namespace surge::queue {

// A delivery on one connection: its tag means nothing on another one.
struct Delivery {
  uint64_t tag = 0;
  uint64_t connection = 0;  // the consumer's connection generation
};

struct DedupEntry {
  bool done = false;
  std::string reply_to{};
  std::string correlation_id{};
  std::string reply{};                 // the reply body once done
  std::optional<Delivery> waiting{};   // the delivery to ack once done
  int64_t done_at_ms = 0;
};

class DedupWindow {
 public:
  DedupWindow(int64_t ttl_ms, size_t max_entries) : ttl_ms_(ttl_ms), max_entries_(max_entries) {}

  // nullptr when `key` is new (or was forgotten); the pointer lives until the next call.
  DedupEntry* Find(const std::string& key, int64_t now_ms);
  DedupEntry& StartRunning(const std::string& key, DedupEntry entry);
  // The entry of a running key, now done with `reply`; nullptr for a key not running.
  DedupEntry* MarkDone(const std::string& key, std::string reply, int64_t now_ms);
  size_t size() const { return entries_.size(); }

 private:
  void Expire(int64_t now_ms);

  const int64_t ttl_ms_;
  const size_t max_entries_;
  std::unordered_map<std::string, DedupEntry> entries_;
  std::list<std::string> done_order_;  // done keys, oldest first
};

}  // namespace surge::queue
