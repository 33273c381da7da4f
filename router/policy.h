// Policy: how a pool chooses one backend for one request, and the name -> factory registry
// (`round-robin`, `least-load`, `p2c`, `session`; `cache-aware` registers itself the same
// way). A policy sees the request (path, parsed body, headers) and each routable
// candidate's state; it never sees backends that are unhealthy, draining, ejected or
// behind an open breaker (the gateway filters them first).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "net/http_types.h"
#include "router/backend.h"
#include "router/route_config.h"

namespace surge::router {

struct RouteRequest {
  std::string_view path;                    // "/v1/chat/completions"
  const nlohmann::json* body = nullptr;     // null when the body is not a JSON object
  std::string_view raw_body;                // the bytes as received (cache-aware hashes the prompt from them)
  const net::HttpHeaders* headers = nullptr;
};

struct Candidate {
  int32_t backend_id = -1;  // Backend::id(): stable across calls, for per-backend policy state
  std::string_view url;
  double weight = 1;
  EngineLoad load;           // from the backend's /metrics; fields -1 when unknown
  int32_t num_in_flight = 0; // this router's requests on it now
  const Backend* backend = nullptr;
};

// A policy's choice, and why (the label of surge_router_policy_decisions_total).
struct PickResult {
  PickResult(size_t chosen, std::string_view why = "pick") : index(chosen), decision(why) {}  // NOLINT: implicit
  size_t index;
  std::string_view decision;      // a static string: "pick", "cache", "balance_fallback", "no_prompt", ...
  int64_t num_prompt_blocks = 0;  // cache-aware: full blocks of the prompt
  int64_t num_cached_blocks = 0;  // cache-aware: of them, believed cached on the chosen backend
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // An index into `candidates` (never empty). Called from many threads at once.
  virtual PickResult Pick(const RouteRequest& request, std::span<const Candidate> candidates) = 0;
  // A backend left the pool: drop any state kept for it.
  virtual void OnBackendRemoved(int32_t /*backend_id*/) {}
};

using PolicyFactory = std::function<StatusOr<std::unique_ptr<Policy>>(const PolicyOptions& options)>;

// Registers (or replaces) a policy name. Thread-safe; the built-in ones are registered
// before the first MakePolicy.
void RegisterPolicy(std::string name, PolicyFactory factory);
// INVALID_ARGUMENT naming the policy (and the known ones) when it is not registered.
StatusOr<std::unique_ptr<Policy>> MakePolicy(std::string_view name, const PolicyOptions& options);
std::vector<std::string> PolicyNames();  // sorted

// The load formula (router/engine_load.h) applied to a candidate.
double LoadFraction(const Candidate& candidate, const PolicyOptions& options);  // capacity: backend_capacity
double QueueLength(const Candidate& candidate);
double RequestLoad(const Candidate& candidate);

// least-load as weighted scorers: score = sum(weight * scorer), higher wins.
struct Scorer {
  double weight = 1;
  std::function<double(const Candidate&, const PolicyOptions&)> score;
};
// The preset: 0.6 * (1 - LoadFraction) + 0.4 / (1 + QueueLength).
std::vector<Scorer> LeastLoadScorers();
std::unique_ptr<Policy> MakeScoringPolicy(std::string name, std::vector<Scorer> scorers, PolicyOptions options);
std::unique_ptr<Policy> MakeRoundRobinPolicy();
std::unique_ptr<Policy> MakeP2cPolicy(const PolicyOptions& options);
std::unique_ptr<Policy> MakeSessionPolicy(const PolicyOptions& options);
// cache-aware (policies/cache_aware_policy.cc): loads options.tokenizer and options.chat_template.
StatusOr<std::unique_ptr<Policy>> MakeCacheAwarePolicy(const PolicyOptions& options);

// The affinity key of a request for the session policy: the header, else the body's
// "user" string; empty when neither is there.
std::string SessionKey(const RouteRequest& request, std::string_view header);

}  // namespace surge::router
