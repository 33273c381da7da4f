// The engine's prefix-cache protocol as the router reads it: GET /kv_config (block size,
// hash, seed, capacity) and the batches of GET /kv_events (server/README.md). Parsed from
// JSON here, never from engine headers: router/ talks to engines over HTTP only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::router {

// What the router needs to compute an engine's block hashes and size its view of it.
struct KvConfig {
  int32_t block_size = 0;
  uint64_t hash_seed = 0;
  int64_t num_total_blocks = 0;
};

// A GET /kv_config body. InvalidArgument when a field is missing or out of range;
// Unimplemented when the engine hashes with a function this router does not know.
StatusOr<KvConfig> ParseKvConfig(std::string_view json);

struct KvEventRun {
  enum class Type { kStored, kEvicted, kCleared };
  Type type = Type::kStored;
  std::vector<uint64_t> block_hashes;  // in the order the engine's cache changed
};

// One engine step's changes. Batches are numbered 1, 2, ...; a snapshot is the whole
// cache after batch `seq` (cleared, then stored of every block; seq 0: before any batch).
struct KvEventBatch {
  uint64_t seq = 0;
  bool snapshot = false;
  std::vector<KvEventRun> events;
};

// One SSE event's data. More than `max_hashes` hashes in it is an error (a broken or
// hostile engine must not grow the router without bound), as is any unknown type.
StatusOr<KvEventBatch> ParseKvEventBatch(std::string_view json, size_t max_hashes);

}  // namespace surge::router
