#include "router/auth/api_keys.h"

#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/bearer_token.h"


namespace surge::router {
namespace {

using nlohmann::json;

constexpr char kAllowedFields[] = "key, tenant, tier, requests_per_minute, tokens_per_minute, admin, semantic_cache";
constexpr size_t kMaxKeyBytes = 512;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' ||
                           text.front() == '\r')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// A key must fit in a Bearer header: printable ASCII, no spaces.
Status CheckKeyText(std::string_view key, std::string_view where) {
  if (key.empty()) return InvalidArgumentError(std::string(where) + ".key must not be empty");
  if (key.size() > kMaxKeyBytes) {
    return InvalidArgumentError(std::string(where) + ".key is longer than " + std::to_string(kMaxKeyBytes) + " bytes");
  }
  for (char c : key) {
    if (c < 0x21 || c > 0x7e) {
      return InvalidArgumentError(std::string(where) + ".key must be printable ASCII without spaces");
    }
  }
  return OkStatus();
}

// An optional positive integer limit; absent or null = unlimited (0).
Status ReadLimit(const json& entry, const char* field, std::string_view where, int64_t* out) {
  const auto it = entry.find(field);
  if (it == entry.end() || it->is_null()) return OkStatus();
  if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX) ||
      it->get<int64_t>() < 1) {
    return InvalidArgumentError(std::string(where) + "." + field +
                                " must be an integer >= 1 (omit it for no limit)");
  }
  *out = it->get<int64_t>();
  return OkStatus();
}

Status ReadOptionalString(const json& entry, const char* field, std::string_view where, std::string* out) {
  const auto it = entry.find(field);
  if (it == entry.end() || it->is_null()) return OkStatus();
  if (!it->is_string() || it->get<std::string>().empty()) {
    return InvalidArgumentError(std::string(where) + "." + field + " must be a non-empty string");
  }
  *out = it->get<std::string>();
  return OkStatus();
}

// One entry of the JSON array into `info`, its key into `key`.
Status ReadEntry(const json& entry, std::string_view where, std::string* key, ApiKeyInfo* info) {
  if (!entry.is_object()) return InvalidArgumentError(std::string(where) + " must be an object");
  for (const auto& [name, value] : entry.items()) {
    if (name != "key" && name != "tenant" && name != "tier" && name != "requests_per_minute" &&
        name != "tokens_per_minute" && name != "admin" && name != "semantic_cache") {
      return InvalidArgumentError(std::string(where) + ": unknown field \"" + name + "\" (allowed: " +
                                  kAllowedFields + ")");
    }
  }
  const auto key_it = entry.find("key");
  if (key_it == entry.end() || !key_it->is_string()) {
    return InvalidArgumentError(std::string(where) + ".key is required (a string)");
  }
  *key = key_it->get<std::string>();
  info->tenant = kDefaultTenant;
  RETURN_IF_ERROR(ReadOptionalString(entry, "tenant", where, &info->tenant));
  std::string tier_name;
  RETURN_IF_ERROR(ReadOptionalString(entry, "tier", where, &tier_name));
  if (!tier_name.empty()) {
    const std::optional<Tier> tier = ParseTierName(tier_name);
    if (!tier) {
      return InvalidArgumentError(std::string(where) + ".tier must be one of \"realtime\", \"normal\", \"batch\", got \"" +
                                  tier_name + "\"");
    }
    info->tier = *tier;
  }
  for (auto [field, out] : {std::pair{"admin", &info->admin}, std::pair{"semantic_cache", &info->semantic_cache}}) {
    const auto it = entry.find(field);
    if (it == entry.end() || it->is_null()) continue;
    if (!it->is_boolean()) return InvalidArgumentError(std::string(where) + "." + field + " must be true or false");
    *out = it->get<bool>();
  }
  RETURN_IF_ERROR(ReadLimit(entry, "requests_per_minute", where, &info->limits.requests_per_minute));
  return ReadLimit(entry, "tokens_per_minute", where, &info->limits.tokens_per_minute);
}

}  // namespace

api::ErrorReply AuthErrorReply(const AuthDecision& decision) {
  return {401, api::ErrorBody(401, decision.error, "", "invalid_api_key")};
}

StatusOr<ApiKeyStore> ApiKeyStore::ParseJson(std::string_view text, std::string_view origin) {
  // The parser's own message may quote the text around the error, which holds keys: say
  // where instead.
  const json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return InvalidArgumentError(std::string(origin) + ": not valid JSON (expected " +
                                "[{\"key\": \"...\", ...}, ...])");
  }
  if (!parsed.is_array()) {
    return InvalidArgumentError(std::string(origin) + ": must be a JSON array of key objects");
  }
  // An empty list would silently leave the router open: whoever configured keys wants them.
  if (parsed.empty()) return InvalidArgumentError(std::string(origin) + ": holds no keys");
  ApiKeyStore store;
  for (size_t i = 0; i < parsed.size(); ++i) {
    const std::string where = std::string(origin) + "[" + std::to_string(i) + "]";
    std::string key;
    ApiKeyInfo info;
    RETURN_IF_ERROR(ReadEntry(parsed[i], where, &key, &info));
    RETURN_IF_ERROR(store.Add(key, std::move(info), where));
  }
  return store;
}

StatusOr<ApiKeyStore> ApiKeyStore::FromFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFoundError("API keys file " + path + ": cannot be read");
  std::ostringstream text;
  text << file.rdbuf();
  return ParseJson(text.str(), path);
}

StatusOr<ApiKeyStore> ApiKeyStore::FromEnvValue(std::string_view value) {
  const std::string_view trimmed = Trim(value);
  if (!trimmed.empty() && trimmed.front() == '[') return ParseJson(trimmed, kApiKeysEnv);
  ApiKeyStore store;
  size_t item = 0;
  for (size_t start = 0; start <= trimmed.size(); ++item) {
    size_t end = trimmed.find(',', start);
    if (end == std::string_view::npos) end = trimmed.size();
    const std::string where = std::string(kApiKeysEnv) + " item " + std::to_string(item);
    const std::string_view key = Trim(trimmed.substr(start, end - start));
    if (key.empty()) return InvalidArgumentError(where + " is empty (a comma list of keys, or JSON)");
    ApiKeyInfo info;
    info.tenant = kDefaultTenant;
    RETURN_IF_ERROR(store.Add(key, std::move(info), where));
    start = end + 1;
  }
  return store;
}

StatusOr<ApiKeyStore> ApiKeyStore::Load(const std::string& path, const char* env_value) {
  ApiKeyStore store;
  if (!path.empty()) {
    ASSIGN_OR_RETURN(store, FromFile(path));
  }
  if (env_value != nullptr) {
    ASSIGN_OR_RETURN(ApiKeyStore from_env, FromEnvValue(env_value));
    RETURN_IF_ERROR(store.Merge(std::move(from_env), kApiKeysEnv));
  }
  return store;
}

Status ApiKeyStore::Add(std::string_view key, ApiKeyInfo info, std::string_view where) {
  RETURN_IF_ERROR(CheckKeyText(key, where));
  const Sha256Digest digest = Sha256(key);
  for (const Sha256Digest& known : digests_) {
    if (known == digest) return InvalidArgumentError(std::string(where) + ".key is configured twice");
  }
  info.id = static_cast<int32_t>(keys_.size());
  keys_.push_back(std::move(info));
  digests_.push_back(digest);
  return OkStatus();
}

Status ApiKeyStore::Merge(ApiKeyStore other, std::string_view origin) {
  for (size_t i = 0; i < other.keys_.size(); ++i) {
    for (const Sha256Digest& known : digests_) {
      if (known == other.digests_[i]) {
        return InvalidArgumentError(std::string(origin) + " entry " + std::to_string(i) +
                                    ": key is also in the keys file");
      }
    }
    other.keys_[i].id = static_cast<int32_t>(keys_.size());
    keys_.push_back(std::move(other.keys_[i]));
    digests_.push_back(other.digests_[i]);
  }
  return OkStatus();
}

AuthDecision ApiKeyStore::Authenticate(std::string_view authorization) const {
  AuthDecision decision;
  if (open()) return decision;
  if (Trim(authorization).empty()) {
    decision.error = "Missing API key: send it as 'Authorization: Bearer <key>'";
    return decision;
  }
  const std::string_view token = api::BearerToken(authorization);
  if (token.empty()) {
    decision.error = "Malformed Authorization header: expected 'Bearer <key>'";
    return decision;
  }
  const Sha256Digest digest = Sha256(token);
  // Every digest is compared and the match selected without a branch on the comparison.
  uint32_t found = 0;
  uint32_t index = 0;
  for (uint32_t i = 0; i < digests_.size(); ++i) {
    const uint32_t mask = 0u - static_cast<uint32_t>(ConstantTimeEquals(digest, digests_[i]));
    found |= mask;
    index = (index & ~mask) | (i & mask);
  }
  if (found == 0) {
    decision.error = "Incorrect API key provided";
    return decision;
  }
  decision.key = &keys_[index];
  return decision;
}

}  // namespace surge::router
