#include "router/tiers/tier.h"

#include <string>

#include "api/generation_params.h"

namespace surge::router {
namespace {

api::ApiError BadPriority(std::string_view field) {
  return api::InvalidParam("priority", std::string(field) + " must be " + api::kPriorityValues);
}

// OpenAI's `service_tier`, when present (api::ServiceTierPriority: priority -> realtime,
// flex -> batch, auto and default -> normal).
api::ApiResult<std::optional<Tier>> ServiceTier(const nlohmann::json& body) {
  const auto it = body.find("service_tier");
  if (it == body.end() || it->is_null()) return std::optional<Tier>();
  std::string echo;
  const std::optional<int32_t> priority =
      it->is_string() ? api::ServiceTierPriority(it->get<std::string>(), &echo) : std::nullopt;
  if (!priority) return api::InvalidParam("service_tier", std::string("service_tier must be ") + api::kServiceTierValues);
  return std::optional<Tier>(TierOfPriority(*priority));
}

// The body's `priority`, when present: an integer in int32 range or a name ParsePriority knows.
api::ApiResult<std::optional<Tier>> BodyTier(const nlohmann::json& body) {
  if (!body.is_object()) return std::optional<Tier>();
  const auto it = body.find("priority");
  if (it == body.end() || it->is_null()) return ServiceTier(body);
  if (it->is_string()) {
    const std::optional<int32_t> parsed = api::ParsePriority(it->get<std::string>());
    if (!parsed) return BadPriority("priority");
    return std::optional<Tier>(TierOfPriority(*parsed));
  }
  if (it->is_number_integer()) {
    const int64_t value = it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX
                              ? INT64_MAX
                              : it->get<int64_t>();
    if (value < INT32_MIN || value > INT32_MAX) return BadPriority("priority");
    return std::optional<Tier>(TierOfPriority(static_cast<int32_t>(value)));
  }
  return BadPriority("priority");
}

}  // namespace

const char* TierName(Tier tier) {
  switch (tier) {
    case Tier::kRealtime: return "realtime";
    case Tier::kNormal: return "normal";
    case Tier::kBatch: return "batch";
  }
  return "normal";
}

std::optional<Tier> ParseTierName(std::string_view name) {
  for (Tier tier : kAllTiers) {
    if (name == TierName(tier)) return tier;
  }
  return std::nullopt;
}

Tier TierOfPriority(int32_t priority) {
  if (priority < 0) return Tier::kRealtime;
  return priority == 0 ? Tier::kNormal : Tier::kBatch;
}

api::ApiResult<Tier> ResolveTier(std::string_view header, const nlohmann::json& body,
                                 std::optional<Tier> key_default) {
  // HTTP allows whitespace around a field value; a parser may leave it.
  while (!header.empty() && (header.front() == ' ' || header.front() == '\t')) header.remove_prefix(1);
  while (!header.empty() && (header.back() == ' ' || header.back() == '\t')) header.remove_suffix(1);
  if (!header.empty()) {
    const std::optional<int32_t> parsed = api::ParsePriority(header);
    if (!parsed) return BadPriority(std::string("header ") + kPriorityHeader);
    return TierOfPriority(*parsed);
  }
  api::ApiResult<std::optional<Tier>> from_body = BodyTier(body);
  if (!from_body.ok()) return from_body.error();
  if (from_body.value()) return *from_body.value();
  return key_default.value_or(Tier::kNormal);
}

bool ForwardTier(Tier tier, nlohmann::json* body) {
  if (!body->is_object()) return false;
  const auto it = body->find("priority");
  if (it != body->end() && !it->is_null()) return false;
  const auto service_tier = body->find("service_tier");
  if (service_tier != body->end() && !service_tier->is_null()) return false;  // the engine reads it the same way
  (*body)["priority"] = TierName(tier);
  return true;
}

}  // namespace surge::router
