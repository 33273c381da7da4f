#include "queue/dedup_window.h"

#include <utility>

namespace surge::queue {

DedupEntry* DedupWindow::Find(const std::string& key, int64_t now_ms) {
  Expire(now_ms);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

DedupEntry& DedupWindow::StartRunning(const std::string& key, DedupEntry entry) {
  entry.done = false;
  return entries_[key] = std::move(entry);
}

DedupEntry* DedupWindow::MarkDone(const std::string& key, std::string reply, int64_t now_ms) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.done) return nullptr;
  it->second.done = true;
  it->second.reply = std::move(reply);
  it->second.done_at_ms = now_ms;
  done_order_.push_back(key);
  Expire(now_ms);
  it = entries_.find(key);  // Expire may have dropped it (max_entries 0)
  return it == entries_.end() ? nullptr : &it->second;
}

// done_order_ holds done keys oldest first; a key re-run after it was forgotten is pushed
// again, so an entry is dropped only when its own time (done_at_ms) says so.
void DedupWindow::Expire(int64_t now_ms) {
  size_t num_done = done_order_.size();
  while (!done_order_.empty()) {
    auto it = entries_.find(done_order_.front());
    const bool stale = it == entries_.end() || !it->second.done;
    const bool over = num_done > max_entries_ || (!stale && now_ms - it->second.done_at_ms >= ttl_ms_);
    if (!stale && !over) break;
    if (!stale) entries_.erase(it);
    done_order_.pop_front();
    --num_done;
  }
}

}  // namespace surge::queue
