#include "router/cache/semantic_cache.h"

#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "router/cache/semantic_guard.h"

namespace surge::router {
namespace {

// A semantic entry's record in a shared backend sits beside its answer: same scope (tenant),
// digest = this prefix + the answer's digest.
constexpr char kRecordPrefix[] = "semantic:";
constexpr size_t kNumCandidates = 4;  // nearest entries the guard may look at, best first

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

SemanticCache::SemanticCache(const SemanticCacheConfig& config, CacheBackend* backend, CacheFamilies families,
                             obs::Registry* registry, std::function<int64_t()> now_ms)
    : config_(config),
      backend_(backend),
      families_(families),
      now_ms_(now_ms),
      guard_rejections_(registry->AddCounterFamily(
          "surge_router_cache_semantic_guard_rejections_total",
          "Semantic lookups whose nearest stored request was similar enough but the lexical guard disagreed "
          "(numbers, negation or names differ): a miss",
          {"scope"})),
      embed_seconds_(registry->AddHistogramFamily("surge_router_cache_embedding_seconds",
                                                  "Time of one call to the embeddings endpoint (--embeddings-url)",
                                                  {"outcome"}, obs::ExponentialBuckets(1e-4, 2, 16))),
      search_seconds_(registry->AddHistogramFamily(
          "surge_router_cache_semantic_search_seconds",
          "Time of a semantic lookup after its embedding came back: index search, guard and the answer's read",
          {"outcome"}, obs::ExponentialBuckets(1e-6, 2, 20))),
      index_({.max_entries = config.max_entries,
              .now_ms = now_ms,
              .on_evict = [evictions = &families.evictions](const std::string& tenant, const char* reason) {
                evictions->WithLabels({kSemanticCacheKind, tenant, reason}).Increment();
              }}),
      embeddings_(std::make_unique<EmbeddingsClient>(EmbeddingsClientOptions{
          .url = config.embeddings_url, .model = config.embeddings_model, .timeout_ms = config.embeddings_timeout_ms})) {}

bool SemanticCache::OptedIn(const std::string& model, bool key_opts_in) const {
  return config_.all || key_opts_in || config_.models.count(model) > 0;
}

void SemanticCache::Lookup(const SemanticQuery& query, std::function<void(SemanticLookupResult)> done) {
  const auto start = std::chrono::steady_clock::now();
  embeddings_->Embed(query.embed_input, [this, query, start, done = std::move(done)](StatusOr<std::vector<float>> vector) {
    embed_seconds_.WithLabels({vector.ok() ? "ok" : "error"}).Observe(SecondsSince(start));
    if (vector.ok()) return Search(query, std::move(vector).value(), {start, std::chrono::steady_clock::now()}, done);
    families_.errors.WithLabels({kSemanticCacheKind, "embeddings", "embed"}).Increment();
    families_.misses.WithLabels({kSemanticCacheKind, query.scope.tenant}).Increment();
    done({});
  });
}

void SemanticCache::Search(const SemanticQuery& query, std::vector<float> vector, LookupStart start,
                           std::function<void(SemanticLookupResult)> done) {
  const double threshold = config_.ThresholdFor(query.model);
  std::optional<SemanticMatch> chosen;
  bool guard_rejected = false;
  for (SemanticMatch& match : index_.Search(query.scope, vector, kNumCandidates)) {
    if (match.similarity < threshold) break;  // best first: none further reaches it
    if (config_.guard && !GuardAgrees(query.text, match.text)) {
      guard_rejected = true;
      continue;
    }
    chosen = std::move(match);
    break;
  }
  const std::string& tenant = query.scope.tenant;
  if (!chosen) {
    if (guard_rejected) guard_rejections_.WithLabels({tenant}).Increment();
    ObserveLookup(start, "miss");
    families_.misses.WithLabels({kSemanticCacheKind, tenant}).Increment();
    return done({std::nullopt, std::move(vector), 0});
  }
  auto result = std::make_shared<SemanticLookupResult>(SemanticLookupResult{std::nullopt, std::move(vector), chosen->similarity});
  backend_->Get(chosen->answer_key, [this, query, start, result, key = chosen->answer_key, done](CacheLookup lookup) {
    ObserveLookup(start, lookup.result == CacheLookup::kHit ? "hit" : "miss");
    if (lookup.result == CacheLookup::kError) {
      families_.errors.WithLabels({kSemanticCacheKind, backend_->name(), "get"}).Increment();
    }
    if (lookup.result != CacheLookup::kHit) {  // the answer went (its own LRU, a flush elsewhere)
      families_.misses.WithLabels({kSemanticCacheKind, query.scope.tenant}).Increment();
      return done(std::move(*result));
    }
    index_.Touch(query.scope, key);
    families_.hits.WithLabels({kSemanticCacheKind, query.scope.tenant}).Increment();
    result->entry = std::move(lookup.value);
    done(std::move(*result));
  });
}

void SemanticCache::ObserveLookup(LookupStart start, const char* outcome) {
  families_.lookup_seconds.WithLabels({kSemanticCacheKind, backend_->name()}).Observe(SecondsSince(start.lookup));
  search_seconds_.WithLabels({outcome}).Observe(SecondsSince(start.search));
}

void SemanticCache::Remember(const SemanticQuery& query, std::vector<float> vector, const CacheKey& answer_key,
                             int64_t ttl_s) {
  if (!vector.empty()) return Insert(query, vector, answer_key, ttl_s);
  embeddings_->Embed(query.embed_input, [this, query, answer_key, ttl_s](StatusOr<std::vector<float>> embedded) {
    if (embedded.ok()) return Insert(query, *embedded, answer_key, ttl_s);
    families_.errors.WithLabels({kSemanticCacheKind, "embeddings", "embed"}).Increment();
  });
}

void SemanticCache::Insert(const SemanticQuery& query, const std::vector<float>& vector, const CacheKey& answer_key,
                           int64_t ttl_s) {
  SemanticEntry entry{.text = query.text, .answer_key = answer_key, .expires_ms = now_ms_() + ttl_s * 1000};
  if (!index_.Insert(query.scope, vector, std::move(entry))) return;
  families_.stores.WithLabels({kSemanticCacheKind, query.scope.tenant}).Increment();
  if (std::string(backend_->name()) != "redis") return;  // memory: the index is the only copy needed
  const nlohmann::json record{{"tenant", query.scope.tenant}, {"scope", query.scope.digest}, {"text", query.text},
                              {"model", query.model}, {"answer", answer_key.digest}, {"vector", vector}};
  backend_->Set({answer_key.scope, kRecordPrefix + answer_key.digest}, record.dump(), ttl_s,
                [this](StoreResult stored) {
                  if (stored == StoreResult::kError) {
                    families_.errors.WithLabels({kSemanticCacheKind, backend_->name(), "set"}).Increment();
                  }
                });
}

void SemanticCache::RestoreRecord(const ScannedValue& scanned) {
  const nlohmann::json record = nlohmann::json::parse(scanned.value, nullptr, /*allow_exceptions=*/false);
  try {
    const SemanticScope scope{record.at("tenant").get<std::string>(), record.at("scope").get<std::string>()};
    const std::vector<float> vector = record.at("vector").get<std::vector<float>>();
    SemanticEntry entry{.text = record.at("text").get<std::string>(),
                        .answer_key = {scope.tenant, record.at("answer").get<std::string>()},
                        .expires_ms = now_ms_() + scanned.ttl_ms};
    index_.Insert(scope, vector, std::move(entry));
  } catch (const nlohmann::json::exception&) {  // another version's record, or damaged: skipped
  }
}

void SemanticCache::Restore() {
  backend_->Scan(kRecordPrefix, static_cast<size_t>(config_.max_entries),
                 [this](StatusOr<std::vector<ScannedValue>> records) {
                   if (!records.ok()) {
                     LOG(WARNING) << "semantic cache: could not rebuild the index: " << records.status().message();
                     return;
                   }
                   for (const ScannedValue& record : *records) RestoreRecord(record);
                   LOG(INFO) << "semantic cache: " << index_.num_entries() << " entries rebuilt from "
                             << backend_->name();
                 });
}

int64_t SemanticCache::Flush(const std::optional<std::string>& tenant) { return index_.Flush(tenant); }

void SemanticCache::RefreshMetrics() {
  families_.entries.WithLabels({kSemanticCacheKind, "hnsw"}).Set(index_.num_entries());
}

}  // namespace surge::router
