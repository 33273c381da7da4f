// Tier: the router's priority classes (realtime, normal, batch), how a request names its
// tier (X-Priority, the body's `priority`, the API key's default) and what is forwarded.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/error.h"

namespace surge::router {

// Ordered most urgent first: the order pools are borrowed in and arrays are indexed by.
enum class Tier : uint8_t { kRealtime = 0, kNormal = 1, kBatch = 2 };
inline constexpr int kNumTiers = 3;
inline constexpr std::array<Tier, kNumTiers> kAllTiers = {Tier::kRealtime, Tier::kNormal,
                                                         Tier::kBatch};

inline constexpr int TierIndex(Tier tier) { return static_cast<int>(tier); }
// "realtime", "normal", "batch": the names on the wire and in metric labels.
const char* TierName(Tier tier);
// Exactly "realtime" / "normal" / "batch"; nullopt otherwise (config files, API keys).
std::optional<Tier> ParseTierName(std::string_view name);
// The engine's mapping (api::PriorityTier): below 0 realtime, 0 normal, above 0 batch.
Tier TierOfPriority(int32_t priority);

// The header a client names its tier in.
inline constexpr char kPriorityHeader[] = "X-Priority";

// The request's tier: the X-Priority header (`header` empty when absent), else the body's
// `priority` (an integer or a tier name, as the engine accepts), else its `service_tier`
// (OpenAI's: priority -> realtime, flex -> batch, auto/default -> normal), else `key_default` (the API
// key's tier), else normal. An unparsable value is an InvalidArgument ApiError naming the
// field (param "priority"; the message names X-Priority when the header was at fault) and
// the allowed values: the gateway answers 400.
api::ApiResult<Tier> ResolveTier(std::string_view header, const nlohmann::json& body,
                                 std::optional<Tier> key_default);

// What the engine should see, so that its own priority scheduling agrees with the router:
// when `body` is an object without `priority` or `service_tier`, sets `priority` to the
// tier's name (a service_tier goes on as is: the engine maps it alike and echoes it). A priority the
// client wrote is kept as written (it may be finer-grained than the tier). Returns whether
// the body changed (the gateway then re-serialises it).
bool ForwardTier(Tier tier, nlohmann::json* body);

}  // namespace surge::router
