#include "router/cache/cache_request.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "base/crypto.h"

namespace surge::router {
namespace {

using Json = nlohmann::json;

constexpr int kMaxCanonicalDepth = 64;  // deeper bodies are not cached (and never recursed into)
constexpr int64_t kMaxTtlSeconds = 30 * 24 * 3600;
constexpr std::array<std::string_view, 6> kFieldsOutsideKey = {"stream", "stream_options", "user",
                                                                "priority", "timeout", kCacheBodyField};

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// `0.0` and `0` mean the same to the engine: one spelling in the key. Only where a double
// holds the integer exactly (|x| < 2^53), so no two seeds ever collide.
bool Canonicalize(Json* value, int depth) {
  if (depth > kMaxCanonicalDepth) return false;
  if (value->is_number_float()) {
    const double number = value->get<double>();
    if (std::isfinite(number) && std::floor(number) == number && std::fabs(number) < 9007199254740992.0) {
      *value = static_cast<int64_t>(number);
    }
    return true;
  }
  if (!value->is_structured()) return true;
  for (Json& child : *value) {
    if (!Canonicalize(&child, depth + 1)) return false;
  }
  return true;
}

Status ReadBool(const Json& object, const char* field, bool* out) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return OkStatus();
  if (!it->is_boolean()) return InvalidArgumentError(std::string("cache.") + field + " must be true or false");
  *out = it->get<bool>();
  return OkStatus();
}

}  // namespace

std::span<const std::string_view> FieldsOutsideKey() { return kFieldsOutsideKey; }

void ApplyCacheControlHeader(std::string_view value, CacheControl* control) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    const std::string directive = Lowercase(Trim(value.substr(0, comma)));
    if (directive == "no-cache" || directive == "max-age=0") control->no_cache = true;
    if (directive == "no-store") control->no_store = true;
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
  }
}

Status TakeCacheBodyField(Json* body, CacheControl* control) {
  if (!body->is_object()) return OkStatus();
  auto it = body->find(kCacheBodyField);
  if (it == body->end()) return OkStatus();
  const Json field = std::move(*it);
  body->erase(it);
  if (!field.is_object()) return InvalidArgumentError("cache must be an object ({\"no_cache\", \"no_store\", \"ttl_s\"})");
  for (const auto& [name, unused] : field.items()) {
    if (name != "no_cache" && name != "no_store" && name != "ttl_s") {
      return InvalidArgumentError("unknown field cache." + name + " (allowed: no_cache, no_store, ttl_s)");
    }
  }
  if (Status status = ReadBool(field, "no_cache", &control->no_cache); !status.ok()) return status;
  if (Status status = ReadBool(field, "no_store", &control->no_store); !status.ok()) return status;
  if (auto ttl = field.find("ttl_s"); ttl != field.end() && !ttl->is_null()) {
    if (!ttl->is_number_integer() || ttl->get<int64_t>() < 1 || ttl->get<int64_t>() > kMaxTtlSeconds) {
      return InvalidArgumentError("cache.ttl_s must be an integer number of seconds in [1, " +
                                  std::to_string(kMaxTtlSeconds) + "]");
    }
    control->ttl_s = ttl->get<int64_t>();
  }
  return OkStatus();
}

bool IsCachedPath(std::string_view path) { return path == "/v1/chat/completions" || path == "/v1/completions"; }

const char* UncacheableReason(const Json& body) {
  if (!body.is_object()) return "not_json";
  auto temperature = body.find("temperature");
  const bool greedy = temperature != body.end() && temperature->is_number() && temperature->get<double>() == 0;
  auto seed = body.find("seed");
  const bool seeded = seed != body.end() && seed->is_number_integer();
  return greedy || seeded ? nullptr : "sampling";
}

std::optional<std::string> ExactCacheKey(std::string_view scope, std::string_view path, const Json& body,
                                         std::string_view client_model) {
  Json canonical = body;
  if (canonical.is_object()) {
    for (std::string_view field : kFieldsOutsideKey) canonical.erase(std::string(field));
    if (!client_model.empty()) canonical["model"] = client_model;
  }
  if (!Canonicalize(&canonical, 0)) return std::nullopt;
  // nlohmann::json keeps object keys sorted: dump() is the canonical text. Lengths first,
  // so that no scope/path/body split can be read two ways.
  const std::string text = canonical.dump();
  std::string material = std::to_string(scope.size()) + ":" + std::string(scope) + std::to_string(path.size()) +
                         ":" + std::string(path) + text;
  return Sha256Hex(material);
}

}  // namespace surge::router
