#include "router/proxy_cache.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "net/sse.h"

namespace surge::router {
namespace {

bool IncludeUsage(const nlohmann::json& body) {
  auto options = body.find("stream_options");
  if (options == body.end() || !options->is_object()) return false;
  auto include = options->find("include_usage");
  return include != options->end() && include->is_boolean() && include->get<bool>();
}

}  // namespace

Status ProxyCache::Plan(ResponseCache* cache, const net::HttpRequest& request, nlohmann::json* body,
                        std::string_view scope, std::string_view client_model, bool key_opts_in,
                        bool* body_changed) {
  const bool had_field = body->is_object() && body->contains(kCacheBodyField);
  *body_changed = had_field;
  if (Status status = TakeCacheBodyField(body, &control_); !status.ok()) return status;
  if (cache == nullptr || request.method != "POST" || !IsCachedPath(request.path)) {
    if (had_field) return InvalidArgumentError("cache: this request is not cached (start surge route with --cache, "
                                               "and send it to /v1/chat/completions or /v1/completions)");
    return OkStatus();
  }
  cache_ = cache;
  key_.scope = std::string(scope);
  const char* reason = UncacheableReason(*body);
  std::optional<std::string> digest;
  if (reason == nullptr) digest = ExactCacheKey(scope, request.path, *body, client_model);
  if (reason == nullptr && !digest) reason = "too_deep";
  if (reason == nullptr && control_.no_cache) reason = "no_cache";
  if (const std::string* header = request.headers.Find("cache-control"); header != nullptr) {
    ApplyCacheControlHeader(*header, &control_);
    if (reason == nullptr && control_.no_cache) reason = "no_cache";
  }
  if (digest) key_.digest = std::move(*digest);
  lookup_ = reason == nullptr;
  store_ = digest.has_value() && !control_.no_store;
  header_ = lookup_ ? "miss" : "bypass";
  if (reason != nullptr) cache_->CountBypass(scope, reason);
  auto stream = body->find("stream");
  stream_ = stream != body->end() && stream->is_boolean() && stream->get<bool>();
  include_usage_ = stream_ && IncludeUsage(*body);
  if (store_ && stream_) tee_ = std::make_unique<StreamAssembler>(static_cast<size_t>(cache->config().max_entry_bytes) * 4);
  if (digest) PlanSemantic(request, *body, client_model, key_opts_in);
  return OkStatus();
}

// Only requests the exact cache would key (deterministic, not too deep), and only when their
// route or key opted in; an ineligible one is counted as a semantic bypass by its reason.
void ProxyCache::PlanSemantic(const net::HttpRequest& request, const nlohmann::json& body,
                              std::string_view client_model, bool key_opts_in) {
  SemanticCache* semantic = cache_->semantic();
  if (semantic == nullptr) return;
  std::string model(client_model);
  if (auto it = body.find("model"); model.empty() && it != body.end() && it->is_string()) model = it->get<std::string>();
  if (!semantic->OptedIn(model, key_opts_in)) return;
  if (const char* reason = SemanticIneligibleReason(request.path, body)) {
    return cache_->CountBypass(key_.scope, reason, kSemanticCacheKind);
  }
  semantic_ = SemanticQueryFor(key_.scope, request.path, body, client_model);
}

void ProxyCache::Lookup(std::function<void(bool)> done) {
  cache_->Lookup(key_, [this, done = std::move(done)](std::optional<std::string> entry) {
    if (Render(entry)) {
      header_ = "hit";
      hit_kind_ = kExactCacheKind;
      return done(true);
    }
    if (!semantic_) return done(false);
    LookupSemantic(std::move(done));
  });
}

void ProxyCache::LookupSemantic(std::function<void(bool)> done) {
  cache_->semantic()->Lookup(*semantic_, [this, done = std::move(done)](SemanticLookupResult result) {
    vector_ = std::move(result.vector);  // kept for the store, should this be a miss
    const bool served = Render(result.entry);
    if (served) {
      header_ = "hit";
      hit_kind_ = kSemanticCacheKind;
      similarity_ = result.similarity;
    }
    done(served);
  });
}

// An entry comes from memory or Redis, which another router version may have written: one
// that does not render is a miss (and the fresh answer replaces it), never an exception.
bool ProxyCache::Render(const std::optional<std::string>& entry) {
  std::optional<CachedResponse> parsed = entry ? ParseCachedResponse(*entry) : std::nullopt;
  if (!parsed) return false;
  const CachedResponse& hit = *parsed;
  const bool needs_usage = !stream_ || include_usage_;
  if (needs_usage && !hit.has_usage()) return false;  // answered fresh, and stored with usage
  try {
    const ReplayMeta meta = NewReplayMeta(hit.entry.value("object", ""));
    hit_reply_ = stream_ ? ReplayStream(hit, meta, include_usage_) : std::vector<std::string>{ReplayWhole(hit, meta)};
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

void ProxyCache::WriteHit(net::ResponseWriter& writer, net::HttpHeaders headers) const {
  headers.Set("x-surge-cache", "hit");
  headers.Set("x-surge-cache-kind", hit_kind_);
  if (hit_kind_ == kSemanticCacheKind) {
    char similarity[16];
    std::snprintf(similarity, sizeof(similarity), "%.4f", similarity_);
    headers.Set("x-surge-cache-similarity", similarity);
  }
  if (!stream_) {
    headers.Set("content-type", "application/json");
    return writer.Send(200, std::move(headers), hit_reply_.front());
  }
  for (const auto& [name, value] : net::SseHeaders()) headers.Set(name, value);
  writer.StartStream(200, std::move(headers));
  for (const std::string& event : hit_reply_) writer.Write(net::EncodeSseData(event));
  writer.End();
}

int64_t ProxyCache::TtlSeconds() const { return control_.ttl_s.value_or(cache_->config().ttl_s); }

void ProxyCache::OnWholeAnswer(int status, std::string_view body) {
  if (!store_ || stream_ || status != 200) return;
  if (std::optional<std::string> entry = EntryFromWholeResponse(body)) StoreEntry(std::move(*entry));
}

// The answer under its exact key; its vector too when it is the semantic kind's (and will be
// stored: an index entry whose answer was refused would only ever miss).
void ProxyCache::StoreEntry(std::string entry) {
  const bool fits = static_cast<int64_t>(entry.size()) <= cache_->config().max_entry_bytes;
  cache_->Store(key_, std::move(entry), TtlSeconds());
  if (semantic_ && fits) cache_->semantic()->Remember(*semantic_, std::move(vector_), key_, TtlSeconds());
}

void ProxyCache::OnStreamData(std::string_view data) {
  if (tee_) tee_->Feed(data);
}

void ProxyCache::OnStreamEnd(bool ok) {
  if (!tee_ || !ok) return;
  if (std::optional<std::string> entry = tee_->Finish()) StoreEntry(std::move(*entry));
  tee_.reset();
}

}  // namespace surge::router
