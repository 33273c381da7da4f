// The engine's prefix-cache protocol on the wire, both ends in one place: GET /kv_config
// (block size, hash, seed, capacity) and the batches of GET /kv_events (server/README.md),
// encoded by surge serve and decoded by surge route, so that the two cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::api {

// What a router needs to compute an engine's block hashes and size its view of it.
struct KvConfig {
  int32_t block_size = 0;
  uint64_t hash_seed = 0;
  int64_t num_total_blocks = 0;
};

struct KvEventRun {
  enum class Type { kStored, kEvicted, kCleared };
  Type type = Type::kStored;
  std::vector<uint64_t> block_hashes;  // in the order the engine's cache changed; empty for kCleared
};
const char* KvEventTypeName(KvEventRun::Type type);  // "stored", "evicted", "cleared"

// One engine step's changes. Batches are numbered 1, 2, ...; a snapshot is the whole
// cache after batch `seq` (cleared, then stored of every block; seq 0: before any batch).
struct KvEventBatch {
  uint64_t seq = 0;
  bool snapshot = false;
  std::vector<KvEventRun> events;
};

// {"prefix_caching": true, "block_size", "hash": base/block_hash.h's kBlockHashName,
// "hash_seed" (16 hex digits), "num_total_blocks", "events": "/kv_events"}.
std::string EncodeKvConfig(const KvConfig& config);
// A GET /kv_config body. InvalidArgument when a field is missing or out of range;
// Unimplemented when the engine hashes with a function this build does not know.
StatusOr<KvConfig> ParseKvConfig(std::string_view json);

// {"seq":N,"snapshot":bool,"events":[{"type":"stored","block_hashes":["<16 hex digits>",...]},...]}
std::string EncodeKvEventBatch(const KvEventBatch& batch);
// One SSE event's data. More than `max_hashes` hashes in it is an error (a broken or
// hostile engine must not grow the router without bound), as is any unknown type.
StatusOr<KvEventBatch> ParseKvEventBatch(std::string_view json, size_t max_hashes);

}  // namespace surge::api
