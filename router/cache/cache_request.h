// What the exact response cache reads from a request: whether its path is cached, whether
// it is deterministic enough to cache, the per-request controls (Cache-Control header and
// the body's "cache" object, which the router takes out before forwarding), and the key:
// SHA-256 over the tenant scope, the path and the canonical body.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace surge::router {

// The body field that carries per-request cache controls (router/cache/README.md).
inline constexpr char kCacheBodyField[] = "cache";

// Body fields left out of the key because they cannot change a completed response's content:
// transport (stream, stream_options), bookkeeping (user, priority), the engine's deadline
// (timeout: a request that runs out is never stored) and the cache controls themselves.
std::span<const std::string_view> FieldsOutsideKey();

struct CacheControl {
  bool no_cache = false;  // do not answer from the cache (the fresh answer is still stored)
  bool no_store = false;  // do not store this answer
  std::optional<int64_t> ttl_s;  // this entry's lifetime instead of the configured one
};

// The Cache-Control request header: `no-cache` and `no-store` (case-insensitive, in a comma
// list); `max-age=0` reads as no-cache. Other directives are HTTP's to ignore.
void ApplyCacheControlHeader(std::string_view value, CacheControl* control);
// Takes the body's "cache" object ({"no_cache": bool, "no_store": bool, "ttl_s": int}) out of
// `body` into `control`. INVALID_ARGUMENT naming the field ("cache.ttl_s", "cache.foo").
Status TakeCacheBodyField(nlohmann::json* body, CacheControl* control);

// /v1/chat/completions and /v1/completions.
bool IsCachedPath(std::string_view path);
// Why the answer to `body` may not be cached, or nullptr when it may: "not_json" (no object
// body), "sampling" (temperature absent or > 0 without a `seed`: the engine's default
// temperature is 1, so an answer would be one draw of many).
const char* UncacheableReason(const nlohmann::json& body);

// The entry's key: lowercase hex SHA-256 of scope, path and the canonical body (keys sorted,
// FieldsOutsideKey dropped, integral floats written as integers, `model` from
// `client_model` when non-empty: the name the client asked for, before an alias rewrote
// it). nullopt when the body nests deeper than the bound (not cached).
std::optional<std::string> ExactCacheKey(std::string_view scope, std::string_view path, const nlohmann::json& body,
                                         std::string_view client_model = {});

}  // namespace surge::router
