// ApiKeyStore: the router's API keys (from a JSON file or SURGE_ROUTE_API_KEYS), each with a
// tenant, a default tier and rate limits, and the constant-time `Authorization: Bearer` check.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/error.h"
#include "base/crypto.h"
#include "base/status.h"
#include "router/tiers/tier.h"

namespace surge::router {

inline constexpr char kApiKeysEnv[] = "SURGE_ROUTE_API_KEYS";
// A key's tenant when the configuration names none (bare keys from the environment).
inline constexpr char kDefaultTenant[] = "default";

// Per-minute token-bucket limits; 0 = unlimited (the field was absent).
struct KeyLimits {
  int64_t requests_per_minute = 0;
  int64_t tokens_per_minute = 0;
};

struct ApiKeyInfo {
  int32_t id = 0;  // the key's position in the store: what RateLimiter files its buckets under
  std::string tenant;
  Tier tier = Tier::kNormal;  // the default when a request names none
  KeyLimits limits;
  bool admin = false;  // may call the router's admin routes (DELETE /cache)
  bool semantic_cache = false;  // its requests use the semantic cache too (router/cache/README.md)
};

// The outcome of checking a request's Authorization header.
struct AuthDecision {
  const ApiKeyInfo* key = nullptr;  // the matched key; nullptr when open or refused
  std::string error;                // why it was refused (never quotes the key); "" when ok
  bool ok() const { return error.empty(); }
};

// 401 with OpenAI's error object, code "invalid_api_key". Only for a refused decision.
api::ErrorReply AuthErrorReply(const AuthDecision& decision);

// Immutable after loading, so it may be read from any thread. Holds SHA-256 digests of the
// keys, not the keys.
class ApiKeyStore {
 public:
  ApiKeyStore() = default;  // open: no keys, every request passes

  // `text`: [{"key": "...", "tenant": "acme", "tier": "normal", "requests_per_minute": 600,
  // "tokens_per_minute": 100000, "admin": false, "semantic_cache": false}, ...]. Only "key" is required; other fields are refused
  // by name. Errors start with `origin` (the file or variable) and name the entry and field.
  static StatusOr<ApiKeyStore> ParseJson(std::string_view text, std::string_view origin);
  static StatusOr<ApiKeyStore> FromFile(const std::string& path);
  // The variable's value: the same JSON, or a comma list of bare keys (tenant "default",
  // tier normal, no limits).
  static StatusOr<ApiKeyStore> FromEnvValue(std::string_view value);
  // Both sources, merged (a key in both is refused as a duplicate): `path` empty = no file,
  // `env_value` nullptr = variable unset.
  static StatusOr<ApiKeyStore> Load(const std::string& path, const char* env_value);

  bool open() const { return keys_.empty(); }
  size_t size() const { return keys_.size(); }
  const std::vector<ApiKeyInfo>& keys() const { return keys_; }

  // `authorization`: the header's value ("" when absent). Open: ok with no key. Otherwise
  // "Bearer <key>" must name a configured key. The time taken depends on the number of keys,
  // not on the presented key's content: every digest is compared, in constant time.
  AuthDecision Authenticate(std::string_view authorization) const;

 private:
  // Appends `other`'s keys; InvalidArgument when a key is in both.
  Status Merge(ApiKeyStore other, std::string_view origin);
  Status Add(std::string_view key, ApiKeyInfo info, std::string_view where);

  std::vector<ApiKeyInfo> keys_;
  std::vector<Sha256Digest> digests_;  // [keys_.size()]
};

}  // namespace surge::router
