// ProxyCache: one proxied request's part in the response cache (router/cache/): what was
// decided for it (look up? store? semantic too? the x-surge-cache header), the hit reply
// (exact first; on an exact miss, semantic), and the tee that turns the live answer -- whole
// or streamed -- into an entry once it completed (and files its vector for the semantic kind).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/http_types.h"
#include "net/response_writer.h"
#include "router/cache/cache_backend.h"
#include "router/cache/cache_request.h"
#include "router/cache/cached_response.h"
#include "router/cache/response_cache.h"
#include "router/cache/semantic_request.h"
#include "router/cache/stream_assembler.h"

namespace surge::router {

// The `backend` label of surge_router_requests_total for a request answered from the cache.
inline constexpr char kCacheBackendLabel[] = "cache";

class ProxyCache {
 public:
  // Decides for `request` (body already parsed into `body`; `scope` = the key's tenant).
  // Takes the body's "cache" object out (`*body_changed` = true: re-serialize before
  // forwarding). A bad one -- or one sent while the cache is off -- is the returned error
  // (a 400 for the client). `cache` null: off. `key_opts_in`: the API key's semantic_cache.
  Status Plan(ResponseCache* cache, const net::HttpRequest& request, nlohmann::json* body, std::string_view scope,
              std::string_view client_model, bool key_opts_in, bool* body_changed);

  bool should_lookup() const { return lookup_; }
  // "hit", "miss" or "bypass" for the x-surge-cache header; nullptr when the path is not cached.
  const char* header() const { return header_; }

  // Exact, then (opted in, eligible) semantic. `done(true)` on a hit whose entry can answer this request's shape (a whole answer and
  // include_usage need the usage an entry made from a plain stream lacks), its reply
  // rendered; `done(false)` otherwise (an entry that does not render is a miss too).
  void Lookup(std::function<void(bool hit)> done);
  // The hit's answer: whole JSON or the replayed SSE stream, with `headers` and x-surge-cache.
  void WriteHit(net::ResponseWriter& writer, net::HttpHeaders headers) const;

  // The live answer. A whole one: stored when 200 and complete. A stream: every byte the
  // client got, then whether it ended cleanly.
  void OnWholeAnswer(int status, std::string_view body);
  void OnStreamData(std::string_view data);
  void OnStreamEnd(bool ok);

 private:
  void PlanSemantic(const net::HttpRequest& request, const nlohmann::json& body, std::string_view client_model,
                    bool key_opts_in);
  void LookupSemantic(std::function<void(bool hit)> done);
  int64_t TtlSeconds() const;
  bool Render(const std::optional<std::string>& entry);
  void StoreEntry(std::string entry);

  ResponseCache* cache_ = nullptr;
  CacheKey key_;
  CacheControl control_;
  bool lookup_ = false;
  bool store_ = false;
  bool stream_ = false;
  bool include_usage_ = false;
  const char* header_ = nullptr;
  std::unique_ptr<StreamAssembler> tee_;  // streams being stored only
  std::vector<std::string> hit_reply_;    // a hit: the whole body, or the stream's data payloads
  std::optional<SemanticQuery> semantic_;  // set: opted in and eligible
  std::vector<float> vector_;             // its embedding, from the semantic lookup
  const char* hit_kind_ = nullptr;        // a hit: kExactCacheKind or kSemanticCacheKind
  float similarity_ = 0;                  // a semantic hit's
};

}  // namespace surge::router
