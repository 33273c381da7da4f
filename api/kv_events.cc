#include "api/kv_events.h"

#include "base/block_hash.h"
#include "base/json_access.h"

namespace surge::api {
namespace {

using json::Json;

// Events nest three levels deep and /kv_config one; anything deeper is not ours.
constexpr int kMaxDepth = 8;
// A block of more tokens than this is no engine's: the hasher would never see a full one.
constexpr int32_t kMaxBlockSize = 1 << 20;

StatusOr<Json> ParseObject(std::string_view text, std::string_view what) {
  ASSIGN_OR_RETURN(Json value, json::Parse(text, what, kMaxDepth));
  if (!value.is_object()) return InvalidArgumentError(std::string(what) + ": must be a JSON object, got " + json::TypeName(value));
  return value;
}

StatusOr<uint64_t> HashOf(const Json& value) {
  uint64_t hash = 0;
  if (!value.is_string() || !BlockHashFromHex(value.get_ref<const std::string&>(), &hash)) {
    return InvalidArgumentError("a block hash is not a string of 1 to 16 hex digits");
  }
  return hash;
}

StatusOr<KvEventRun::Type> TypeOf(const Json* value) {
  for (KvEventRun::Type type : {KvEventRun::Type::kStored, KvEventRun::Type::kEvicted, KvEventRun::Type::kCleared}) {
    if (value != nullptr && *value == KvEventTypeName(type)) return type;
  }
  return InvalidArgumentError("unknown KV event type " + (value != nullptr ? json::Dump(*value).substr(0, 40) : "(none)"));
}

StatusOr<KvEventRun> RunOf(const Json& event, size_t* num_hashes, size_t max_hashes) {
  json::ObjectReader reader(event, "a KV event");
  const Json* hashes = nullptr;
  if (!reader.Array("block_hashes", &hashes).ok()) return reader.status();
  KvEventRun run;
  ASSIGN_OR_RETURN(run.type, TypeOf(reader.Find("type")));
  if (hashes == nullptr) return run;
  *num_hashes += hashes->size();
  if (*num_hashes > max_hashes) {
    return ResourceExhaustedError("a KV event batch holds more than " + std::to_string(max_hashes) + " hashes");
  }
  run.block_hashes.reserve(hashes->size());
  for (const Json& hash : *hashes) {
    ASSIGN_OR_RETURN(uint64_t value, HashOf(hash));
    run.block_hashes.push_back(value);
  }
  return run;
}

}  // namespace

const char* KvEventTypeName(KvEventRun::Type type) {
  switch (type) {
    case KvEventRun::Type::kStored: return "stored";
    case KvEventRun::Type::kEvicted: return "evicted";
    case KvEventRun::Type::kCleared: return "cleared";
  }
  return "stored";
}

std::string EncodeKvConfig(const KvConfig& config) {
  return json::Dump(Json{{"prefix_caching", true},
                         {"block_size", config.block_size},
                         {"hash", kBlockHashName},
                         {"hash_seed", BlockHashToHex(config.hash_seed)},
                         {"num_total_blocks", config.num_total_blocks},
                         {"events", "/kv_events"}});
}

std::string EncodeKvEventBatch(const KvEventBatch& batch) {
  Json events = Json::array();
  for (const KvEventRun& run : batch.events) {
    Json hashes = Json::array();
    for (uint64_t hash : run.block_hashes) hashes.push_back(BlockHashToHex(hash));
    events.push_back({{"type", KvEventTypeName(run.type)}, {"block_hashes", std::move(hashes)}});
  }
  return json::Dump(Json{{"seq", batch.seq}, {"snapshot", batch.snapshot}, {"events", std::move(events)}});
}

StatusOr<KvConfig> ParseKvConfig(std::string_view text) {
  ASSIGN_OR_RETURN(Json value, ParseObject(text, "/kv_config"));
  json::ObjectReader reader(value, "/kv_config");
  std::string hash = "none";
  if (!reader.String("hash", &hash).ok()) return reader.status();
  if (hash != kBlockHashName) {
    return UnimplementedError("the engine's block hash is " + json::Dump(Json(hash)).substr(0, 80) +
                              "; this router computes " + kBlockHashName);
  }
  KvConfig config;
  std::string seed;
  if (reader.Find("block_size") == nullptr) return InvalidArgumentError("/kv_config: block_size is required");
  reader.Int("block_size", int32_t{1}, kMaxBlockSize, &config.block_size)
      .RequiredInt("num_total_blocks", 1, std::numeric_limits<int64_t>::max(), &config.num_total_blocks)
      .RequiredString("hash_seed", &seed);
  if (!reader.ok()) return reader.status();
  StatusOr<uint64_t> hash_seed = HashOf(Json(seed));
  if (!hash_seed.ok()) return InvalidArgumentError("/kv_config: hash_seed: " + std::string(hash_seed.status().message()));
  config.hash_seed = *hash_seed;
  return config;
}

StatusOr<KvEventBatch> ParseKvEventBatch(std::string_view text, size_t max_hashes) {
  ASSIGN_OR_RETURN(Json value, ParseObject(text, "a KV event batch"));
  json::ObjectReader reader(value, "a KV event batch");
  KvEventBatch batch;
  int64_t seq = -1;
  const Json* events = nullptr;
  reader.RequiredInt("seq", 0, std::numeric_limits<int64_t>::max(), &seq)
      .Bool("snapshot", &batch.snapshot)
      .RequiredArray("events", &events);
  if (!reader.ok()) return reader.status();
  batch.seq = static_cast<uint64_t>(seq);
  // Batches count from 1; a snapshot taken before the first one is the state after "0".
  if (batch.seq == 0 && !batch.snapshot) return InvalidArgumentError("a KV event batch: seq must be > 0");
  size_t num_hashes = 0;
  for (const Json& event : *events) {
    ASSIGN_OR_RETURN(KvEventRun run, RunOf(event, &num_hashes, max_hashes));
    batch.events.push_back(std::move(run));
  }
  return batch;
}

}  // namespace surge::api
