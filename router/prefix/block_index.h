// BlockIndex: the router's view of one backend's prefix cache -- the set of block hashes
// (base/block_hash.h) it believes the backend holds, bounded to roughly the backend's KV
// capacity, least recently used dropped first. Two ways to keep it:
//   approximate: RecordRequest with the prompt blocks of every request sent there;
//   precise: Apply with the backend's own KV events (GET /kv_events), exact.
// Thread-safe: decisions read it while an event subscriber or the proxy writes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <span>
#include <unordered_map>

#include "router/prefix/kv_events.h"

namespace surge::router {

class BlockIndex {
 public:
  // `max_blocks` >= 1: the backend's num_total_blocks (GET /kv_config) is the natural bound.
  explicit BlockIndex(size_t max_blocks);
  BlockIndex(const BlockIndex&) = delete;
  BlockIndex& operator=(const BlockIndex&) = delete;

  // How many leading hashes of a prompt's chain are held (stops at the first miss: a
  // block's K/V is only reusable after all the blocks before it).
  int32_t NumLeadingCached(std::span<const uint64_t> hashes) const;

  // Approximate mode: a request with these prompt blocks went to this backend. They
  // become the most recently used, the first block most of all (the engine, too, evicts
  // a prefix's tail before its head).
  void RecordRequest(std::span<const uint64_t> hashes);

  // Precise mode: one batch of the backend's events. A snapshot replaces everything; an
  // ordinary batch must follow the last one applied (seq + 1). Otherwise it is a gap:
  // nothing is applied, the index is cleared (it no longer knows) and false is returned
  // -- the subscriber then reconnects for a snapshot.
  bool Apply(const KvEventBatch& batch);

  void Clear();
  size_t size() const;
  size_t max_blocks() const { return max_blocks_; }
  uint64_t last_seq() const;  // of the last batch applied; 0 before any
  int64_t num_gaps() const;

 private:
  // Under mu_.
  void Touch(uint64_t hash);
  void Erase(uint64_t hash);
  void ApplyRun(const KvEventRun& run);

  const size_t max_blocks_;
  mutable std::mutex mu_;
  std::list<uint64_t> lru_;  // guarded by mu_: most recently used first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where_;  // guarded by mu_
  uint64_t last_seq_ = 0;    // guarded by mu_
  int64_t num_gaps_ = 0;     // guarded by mu_
};

}  // namespace surge::router
