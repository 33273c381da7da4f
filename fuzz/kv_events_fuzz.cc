// libFuzzer target: what the router reads from an engine's prefix cache (api/kv_events.cc,
// compiled into this target alone): byte 0 even -> ParseKvConfig (GET
// /kv_config), odd -> ParseKvEventBatch (one GET /kv_events SSE event, at most 64 hashes).
// Whatever the bytes, a parse returns a Status (never throws); what it accepts keeps the
// header's promises.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "api/kv_events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto config = surge::api::ParseKvConfig(text);
    if (config.ok()) {
      CHECK(config->block_size >= 1 && config->block_size <= (1 << 20)) << config->block_size;
      CHECK(config->num_total_blocks >= 1) << config->num_total_blocks;
    }
    return 0;
  }
  constexpr size_t kMaxHashes = 64;
  auto batch = surge::api::ParseKvEventBatch(text, kMaxHashes);
  if (!batch.ok()) return 0;
  CHECK(batch->seq > 0 || batch->snapshot);
  size_t num_hashes = 0;
  for (const auto& run : batch->events) num_hashes += run.block_hashes.size();
  CHECK(num_hashes <= kMaxHashes) << num_hashes;
  return 0;
}
