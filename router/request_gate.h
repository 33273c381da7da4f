// RequestGate: what a request passes before a backend is chosen — its API key (401), its
// tier (400 on a bad X-Priority / priority), its key's rate limits (429 with Retry-After and
// x-ratelimit-*), and, with tiers on, the tier's pool (borrowing lower pools while its P95
// TTFT is over threshold) and that pool's weighted admission queue (429 when full). Owns
// the key store, the limiter and the per-pool TierAdmission (router/tiers, router/auth).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "net/http_types.h"
#include "obs/metrics.h"
#include "router/auth/api_keys.h"
#include "router/auth/rate_limiter.h"
#include "router/backend_set.h"
#include "router/route_config.h"
#include "router/tiers/borrow_policy.h"
#include "router/tiers/tier_admission.h"
#include "router/tiers/tier_metrics.h"
#include "router/tiers/ttft_window.h"

namespace surge::router {

// A request refused at the gate: the status, the OpenAI error body and extra headers.
struct GateRefusal {
  int status = 0;
  std::string body;
  net::HttpHeaders headers;
};

// What the gate decided for one admitted request; handed back at its end.
struct GatePass {
  const ApiKeyInfo* key = nullptr;
  Tier tier = Tier::kNormal;
  RateLimitDecision limit;
  net::HttpHeaders headers;  // x-ratelimit-* to add to the response
};

class RequestGate {
 public:
  // `keys` may be open (no keys). `registry` receives the tier series (tiers on only).
  static StatusOr<std::unique_ptr<RequestGate>> Create(const RouteConfig& config, ApiKeyStore keys,
                                                       obs::Registry* registry);

  bool tiers_on() const { return borrow_ != nullptr; }

  // Auth, tier, limits. On pass, the body may be changed (the tier forwarded as `priority`):
  // `*body_changed` says so. Generation paths are charged tokens; others only the prompt.
  std::optional<GateRefusal> Check(const net::HttpRequest& request, nlohmann::json* body, bool generates,
                                   GatePass* pass, bool* body_changed);

  // The router's admin routes (DELETE /cache): an open router lets everyone; otherwise the
  // key must have "admin": true (401 for no or an unknown key, 403 for a key without it).
  std::optional<GateRefusal> CheckAdmin(const net::HttpRequest& request) const;

  // Tiers on: the pool for `tier` (its own, or a borrowed one with room), or a refusal (503,
  // with the tier's own pool) when no pool of it has a routable backend. Tiers off:
  // `model_pool`.
  struct PoolChoice {
    std::string pool;
    std::optional<GateRefusal> refusal;
  };
  PoolChoice ChoosePool(Tier tier, const std::string& model_pool, const BackendSet& backends);
  // Tiers on: a ticket of `pool`'s admission queue: admitted now, or `on_admitted` runs
  // later (any thread). Tiers off: always admitted, ticket kNoTicket.
  struct Admission {
    TicketId ticket = kNoTicket;
    bool admitted = true;
    std::optional<GateRefusal> refusal;  // the queue is full
  };
  Admission Admit(Tier tier, const std::string& pool, TierAdmission::AdmitCallback on_admitted);
  // A queued ticket whose client left: true when it was still queued (nothing to release).
  bool Cancel(const std::string& pool, TicketId ticket);
  // The request ended: its slot back, its tokens settled, its TTFT counted (when >= 0).
  void Finish(const GatePass& pass, const std::string& pool, TicketId ticket, int64_t actual_tokens,
              double ttft_ms);
  // Before /metrics is rendered: the tier gauges.
  void RefreshMetrics();
  // Whether some tier's home pool is short of capacity (the autoscaler's input).
  bool NeedsCapacity(const std::string& pool);

 private:
  RequestGate(const RouteConfig& config, ApiKeyStore keys);
  TierAdmission* AdmissionFor(const std::string& pool);
  std::string PickTierPool(Tier tier, const BackendSet& backends);

  const RouteConfig& config_;
  const ApiKeyStore keys_;
  RateLimiter limiter_;
  std::unique_ptr<TtftWindow> window_;
  std::unique_ptr<BorrowPolicy> borrow_;  // null: tiers off
  std::unique_ptr<TierMetrics> metrics_;
  std::map<std::string, std::unique_ptr<TierAdmission>, std::less<>> admissions_;  // by pool; fixed after Create
};

}  // namespace surge::router
