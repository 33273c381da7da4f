// LruMap: a map bounded in entries that drops the least recently used first. Not
// thread-safe: its owner locks around it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <list>
#include <unordered_map>
#include <utility>

namespace surge {

template <typename Key, typename Value>
class LruMap {
 public:
  explicit LruMap(size_t max_entries) : max_entries_(std::max<size_t>(1, max_entries)) {}

  // The value, now the most recently used; nullptr when absent.
  Value* Find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);
    return &it->second->second;
  }

  // Inserts or replaces; past the bound the least recently used entry goes.
  void Put(Key key, Value value) {
    if (Value* existing = Find(key)) {
      *existing = std::move(value);
      return;
    }
    if (entries_.size() >= max_entries_) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    entries_.emplace_front(key, std::move(value));
    index_.emplace(std::move(key), entries_.begin());
  }

  bool Erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    entries_.erase(it->second);
    index_.erase(it);
    return true;
  }

  size_t size() const { return entries_.size(); }
  // The least recently used entry (nullptr when empty), for owners that drop entries by a
  // bound of their own (bytes) through Erase.
  const std::pair<Key, Value>* Oldest() const { return entries_.empty() ? nullptr : &entries_.back(); }

 private:
  using Entry = std::pair<Key, Value>;

  const size_t max_entries_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<Key, typename std::list<Entry>::iterator> index_;
};

}  // namespace surge
