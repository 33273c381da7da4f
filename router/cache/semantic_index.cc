#include "router/cache/semantic_index.h"

#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <cmath>
#include <shared_mutex>

namespace surge::router {
namespace {

// A unit-length copy of `vector`; empty when it has no direction (all zeros, NaN).
std::vector<float> Normalized(std::span<const float> vector) {
  double sum = 0;
  for (float x : vector) sum += static_cast<double>(x) * x;
  if (!(sum > 0) || !std::isfinite(sum)) return {};
  const float scale = static_cast<float>(1.0 / std::sqrt(sum));
  std::vector<float> out(vector.begin(), vector.end());
  for (float& x : out) x *= scale;
  return out;
}

// glibc's rwlock (behind std::shared_mutex) prefers readers: under a steady stream of
// lookups an insert would wait forever. A writer first takes the turnstile, which new
// readers must pass, so it waits only for the searches already running.
class GraphLock {
 public:
  void lock() {
    std::lock_guard<std::mutex> turn(turnstile_);
    rw_.lock();
  }
  void unlock() { rw_.unlock(); }
  void lock_shared() {
    std::lock_guard<std::mutex> turn(turnstile_);
    rw_.lock_shared();
  }
  void unlock_shared() { rw_.unlock_shared(); }

 private:
  std::mutex turnstile_;
  std::shared_mutex rw_;
};

// Searches ask hnswlib for more than `k`: expired and just-evicted entries are still in the
// graph until their slot is reused, and are skipped here.
size_t NumToSearch(size_t k) { return std::max<size_t>(2 * k, k + 8); }

}  // namespace

// One scope's graph and bookkeeping. `graph_mu` guards space/hnsw/capacity; the rest is
// guarded by SemanticIndex::mu_.
struct SemanticIndex::Scope {
  std::string tenant;
  std::string key;
  size_t dim = 0;
  GraphLock graph_mu;
  std::unique_ptr<hnswlib::InnerProductSpace> space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  size_t capacity = 0;
  std::unordered_map<uint64_t, Slot> slots;
  std::unordered_map<std::string, uint64_t> label_by_digest;
  std::vector<uint64_t> free_labels;  // mark-deleted in the graph: reused by the next insert
  uint64_t next_label = 0;
  bool dropped = false;  // flushed or emptied: no longer in scopes_
};

SemanticIndex::SemanticIndex(SemanticIndexOptions options) : options_(std::move(options)) {}
SemanticIndex::~SemanticIndex() = default;

std::shared_ptr<SemanticIndex::Scope> SemanticIndex::FindScope(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scopes_.find(key);
  return it == scopes_.end() ? nullptr : it->second;
}

std::shared_ptr<SemanticIndex::Scope> SemanticIndex::FindOrAddScope(const SemanticScope& scope, size_t dim) {
  const std::string key = ScopeKey(scope);
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Scope>& found = scopes_[key];
  if (found == nullptr) {
    found = std::make_shared<Scope>();
    found->tenant = scope.tenant;
    found->key = key;
    found->dim = dim;
  }
  return found;
}

void SemanticIndex::EraseSlotLocked(Scope& scope, uint64_t label, const char* reason) {
  auto slot = scope.slots.find(label);
  if (slot == scope.slots.end()) return;
  if (reason != nullptr && options_.on_evict) options_.on_evict(scope.tenant, reason);
  lru_.erase(slot->second.lru);
  scope.label_by_digest.erase(slot->second.entry.answer_key.digest);
  scope.slots.erase(slot);
  if (scope.slots.empty()) {  // nothing left to find: the graph goes with the scope
    scope.dropped = true;
    scopes_.erase(scope.key);
  }
}

std::vector<SemanticIndex::Victim> SemanticIndex::TakeVictimsLocked(int64_t now_ms, int64_t keep) {
  std::vector<Victim> victims;
  while (!lru_.empty() && static_cast<int64_t>(lru_.size()) > keep) {
    const LruItem coldest = lru_.back();
    std::shared_ptr<Scope> scope = scopes_.at(coldest.scope_key);
    const bool expired = scope->slots.at(coldest.label).entry.expires_ms <= now_ms;
    EraseSlotLocked(*scope, coldest.label, expired ? "ttl" : "lru");
    if (!scope->dropped) victims.push_back({std::move(scope), coldest.label});
  }
  return victims;
}

// Mark-deletes each victim in its graph (alone in it), then offers the slot for reuse.
void SemanticIndex::MarkVictims(std::vector<Victim> victims) {
  for (Victim& victim : victims) {
    {
      std::unique_lock<GraphLock> graph(victim.scope->graph_mu);
      try {
        victim.scope->hnsw->markDelete(victim.label);
      } catch (const std::exception&) {  // hnswlib throws for a label it has already deleted
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!victim.scope->dropped) victim.scope->free_labels.push_back(victim.label);
  }
}

bool SemanticIndex::Insert(const SemanticScope& scope_id, std::span<const float> vector, SemanticEntry entry) {
  const std::vector<float> unit = Normalized(vector);
  if (unit.empty() || options_.max_entries <= 0) return false;
  const std::string key = ScopeKey(scope_id);
  std::vector<Victim> victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = scopes_.find(key);
    const bool replaces = found != scopes_.end() && found->second->label_by_digest.count(entry.answer_key.digest);
    if (!replaces) victims = TakeVictimsLocked(options_.now_ms(), options_.max_entries - 1);
  }
  MarkVictims(std::move(victims));
  std::shared_ptr<Scope> scope = FindOrAddScope(scope_id, unit.size());
  if (scope->dim != unit.size()) return false;
  std::unique_lock<GraphLock> graph(scope->graph_mu);
  uint64_t label;
  std::vector<Victim> late_victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (scope->dropped) return false;  // flushed meanwhile
    if (auto same = scope->label_by_digest.find(entry.answer_key.digest); same != scope->label_by_digest.end()) {
      label = same->second;
      lru_.erase(scope->slots.at(label).lru);
      scope->slots.erase(label);
    } else if (!scope->free_labels.empty()) {
      label = scope->free_labels.back();
      scope->free_labels.pop_back();
    } else {
      label = scope->next_label++;
    }
    scope->label_by_digest[entry.answer_key.digest] = label;
    lru_.push_front({key, label});
    scope->slots[label] = Slot{std::move(entry), lru_.begin()};
    // Inserts that made room above at once may overshoot together: the coldest go now (never
    // this one, the hottest), marked once this scope's graph lock is released.
    late_victims = TakeVictimsLocked(options_.now_ms(), options_.max_entries);
  }
  if (scope->hnsw == nullptr) {
    scope->space = std::make_unique<hnswlib::InnerProductSpace>(unit.size());
    scope->capacity = static_cast<size_t>(std::max<int64_t>(1, options_.initial_capacity));
    scope->hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(scope->space.get(), scope->capacity, options_.M,
                                                                    options_.ef_construction);
    scope->hnsw->setEf(static_cast<size_t>(options_.ef_search));
  }
  if (label >= scope->capacity) {
    scope->capacity = std::max<size_t>(scope->capacity * 2, label + 1);
    scope->hnsw->resizeIndex(scope->capacity);
  }
  scope->hnsw->addPoint(unit.data(), label);  // an existing (reused) label: updated and undeleted
  graph.unlock();
  MarkVictims(std::move(late_victims));
  return true;
}

std::vector<SemanticMatch> SemanticIndex::Search(const SemanticScope& scope_id, std::span<const float> vector,
                                                 size_t k) {
  std::shared_ptr<Scope> scope = FindScope(ScopeKey(scope_id));
  const std::vector<float> unit = Normalized(vector);
  if (scope == nullptr || unit.size() != scope->dim || k == 0) return {};
  std::shared_lock<GraphLock> graph(scope->graph_mu);
  if (scope->hnsw == nullptr) return {};
  auto nearest = scope->hnsw->searchKnn(unit.data(), NumToSearch(k));
  std::vector<SemanticMatch> matches;
  {
    // Still under the shared graph lock: no label found here can be reused before it is read.
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now_ms = options_.now_ms();
    for (; !nearest.empty(); nearest.pop()) {
      auto slot = scope->slots.find(nearest.top().second);
      if (slot == scope->slots.end() || slot->second.entry.expires_ms <= now_ms) continue;  // evicted, expired
      const float similarity = 1.0f - nearest.top().first;  // hnswlib's inner-product distance is 1 - dot
      matches.push_back({similarity, slot->second.entry.text, slot->second.entry.answer_key});
    }
  }
  std::sort(matches.begin(), matches.end(), [](const SemanticMatch& a, const SemanticMatch& b) {
    return a.similarity > b.similarity;
  });
  if (matches.size() > k) matches.resize(k);
  return matches;
}

void SemanticIndex::Touch(const SemanticScope& scope_id, const CacheKey& answer_key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto scope = scopes_.find(ScopeKey(scope_id));
  if (scope == scopes_.end()) return;
  auto label = scope->second->label_by_digest.find(answer_key.digest);
  if (label == scope->second->label_by_digest.end()) return;
  lru_.splice(lru_.begin(), lru_, scope->second->slots.at(label->second).lru);
}

int64_t SemanticIndex::Flush(const std::optional<std::string>& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t num_dropped = 0;
  for (auto it = scopes_.begin(); it != scopes_.end();) {
    Scope& scope = *it->second;
    if (tenant && scope.tenant != *tenant) {
      ++it;
      continue;
    }
    num_dropped += static_cast<int64_t>(scope.slots.size());
    for (auto& [label, slot] : scope.slots) lru_.erase(slot.lru);
    scope.slots.clear();
    scope.dropped = true;
    it = scopes_.erase(it);
  }
  return num_dropped;
}

int64_t SemanticIndex::num_entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(lru_.size());
}

int64_t SemanticIndex::num_scopes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(scopes_.size());
}

}  // namespace surge::router
