#include "router/prefix/kv_events.h"

#include <nlohmann/json.hpp>

#include "base/block_hash.h"
#include "base/json_depth.h"

namespace surge::router {
namespace {

using Json = nlohmann::json;

// Events nest three levels deep; anything deeper is not ours.
constexpr int kMaxDepth = 8;

StatusOr<Json> ParseObject(std::string_view text, std::string_view what) {
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return InvalidArgumentError(std::string(what) + " is not a JSON object");
  return json;
}

StatusOr<uint64_t> HashOf(const Json& value) {
  uint64_t hash = 0;
  if (!value.is_string() || !BlockHashFromHex(value.get_ref<const std::string&>(), &hash)) {
    return InvalidArgumentError("a block hash is not a string of 1 to 16 hex digits");
  }
  return hash;
}

StatusOr<KvEventRun::Type> TypeOf(const Json& value) {
  if (value == "stored") return KvEventRun::Type::kStored;
  if (value == "evicted") return KvEventRun::Type::kEvicted;
  if (value == "cleared") return KvEventRun::Type::kCleared;
  return InvalidArgumentError("unknown KV event type " + value.dump());
}

StatusOr<KvEventRun> RunOf(const Json& event, size_t* num_hashes, size_t max_hashes) {
  if (!event.is_object()) return InvalidArgumentError("a KV event is not an object");
  KvEventRun run;
  ASSIGN_OR_RETURN(run.type, TypeOf(event.value("type", Json())));
  const Json hashes = event.value("block_hashes", Json::array());
  if (!hashes.is_array()) return InvalidArgumentError("block_hashes is not an array");
  *num_hashes += hashes.size();
  if (*num_hashes > max_hashes) {
    return ResourceExhaustedError("a KV event batch holds more than " + std::to_string(max_hashes) + " hashes");
  }
  run.block_hashes.reserve(hashes.size());
  for (const Json& hash : hashes) {
    ASSIGN_OR_RETURN(uint64_t value, HashOf(hash));
    run.block_hashes.push_back(value);
  }
  return run;
}

}  // namespace

StatusOr<KvConfig> ParseKvConfig(std::string_view text) {
  ASSIGN_OR_RETURN(Json json, ParseObject(text, "the /kv_config body"));
  if (json.value("hash", "") != kBlockHashName) {
    return UnimplementedError("the engine's block hash is " + json.value("hash", Json("none")).dump() +
                              "; this router computes " + kBlockHashName);
  }
  KvConfig config;
  config.block_size = json.value("block_size", 0);
  config.num_total_blocks = json.value("num_total_blocks", int64_t{0});
  ASSIGN_OR_RETURN(config.hash_seed, HashOf(json.value("hash_seed", Json())));
  if (config.block_size <= 0 || config.num_total_blocks <= 0) {
    return InvalidArgumentError("/kv_config: block_size and num_total_blocks must be > 0");
  }
  return config;
}

StatusOr<KvEventBatch> ParseKvEventBatch(std::string_view text, size_t max_hashes) {
  if (!JsonDepthWithin(text, kMaxDepth)) return InvalidArgumentError("a KV event batch nests too deep");
  ASSIGN_OR_RETURN(Json json, ParseObject(text, "a KV event batch"));
  KvEventBatch batch;
  const Json seq = json.value("seq", Json());
  const Json snapshot = json.value("snapshot", Json(false));
  if (!seq.is_number_unsigned() || !snapshot.is_boolean()) return InvalidArgumentError("a batch needs seq and snapshot");
  batch.seq = seq.get<uint64_t>();
  batch.snapshot = snapshot.get<bool>();
  // Batches count from 1; a snapshot taken before the first one is the state after "0".
  if (batch.seq == 0 && !batch.snapshot) return InvalidArgumentError("seq must be > 0");
  const Json events = json.value("events", Json());
  if (!events.is_array()) return InvalidArgumentError("events is not an array");
  size_t num_hashes = 0;
  for (const Json& event : events) {
    ASSIGN_OR_RETURN(KvEventRun run, RunOf(event, &num_hashes, max_hashes));
    batch.events.push_back(std::move(run));
  }
  return batch;
}

}  // namespace surge::router
