// RouterMetrics: the router's own Prometheus families (`surge_router_...`): requests by
// backend / pool / policy / status code, errors by kind, time to first byte and duration
// per pool, retries, ejections, routing-decision latency, open connections, and
// per-backend gauges (breaker state, health, in-flight) refreshed when /metrics is read.
// docs/METRICS.md lists every family.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "obs/metrics.h"
#include "obs/process_metrics.h"
#include "router/backend.h"
#include "router/policy.h"

namespace surge::router {

// The `kind` of surge_router_errors_total for a status the router answered with:
// unauthorized (401, 403), rate_limited (429), client_disconnected (499), bad_request
// (other 4xx), timeout (504), backend_error (other 5xx); "" below 400. no_backend is
// the caller's to say (a 503 of its own, not a backend's).
const char* RouterErrorKind(int status_code);

class RouterMetrics {
 public:
  RouterMetrics();

  // One finished client request; `backend` is the last one tried ("none" when none was).
  void CountRequest(std::string_view backend, std::string_view pool, std::string_view policy, int status_code);
  void CountError(std::string_view kind) { errors_.WithLabels({kind}).Increment(); }
  // One finished client request: seconds from arrival to its first response byte (< 0:
  // none was sent) and to its end.
  void ObserveRequest(std::string_view pool, double first_byte_seconds, double duration_seconds);
  void SetActiveConnections(int64_t num_connections) {
    active_connections_.Set(static_cast<double>(num_connections));
  }
  void CountRetry(std::string_view pool) { retries_.WithLabels({pool}).Increment(); }
  void CountEjection(std::string_view backend) { ejections_.WithLabels({backend}).Increment(); }
  void ObserveDecisionSeconds(double seconds) { decision_seconds_.Observe(seconds); }
  // One policy decision: its label, and cache-aware's prompt and cached block counts.
  void CountDecision(std::string_view pool, std::string_view policy, const PickResult& pick);
  // A request to a complexity alias, by the pool it chose and the rule that decided.
  void CountAliasRoute(std::string_view alias, std::string_view pool, std::string_view reason) {
    alias_routes_.WithLabels({alias, pool, reason}).Increment();
  }
  void CountNoBackend(std::string_view pool) { no_backend_.WithLabels({pool}).Increment(); }
  // Creates the pool's retry and no-backend series at 0, so that rate() over them (the
  // dashboards' per-pool panels) reads 0 rather than nothing before the first event.
  void AddPool(std::string_view pool) {
    retries_.WithLabels({pool});
    no_backend_.WithLabels({pool});
  }
  // A stream that broke after bytes reached the client (it got an SSE error event).
  void CountStreamError(std::string_view backend) { stream_errors_.WithLabels({backend}).Increment(); }

  // Sets the per-backend gauges from `backends` (removed ones read 0) and renders all.
  std::string Expose(std::span<const std::shared_ptr<Backend>> backends, int64_t now_ms);
  // For other parts' families (the tiers'), rendered by Expose with these.
  obs::Registry& registry() { return registry_; }

 private:
  obs::Registry registry_;
  obs::ProcessMetrics process_{&registry_};
  obs::CounterFamily& requests_;
  obs::CounterFamily& errors_;
  obs::HistogramFamily& first_byte_seconds_;
  obs::HistogramFamily& duration_seconds_;
  obs::Gauge& active_connections_;
  obs::CounterFamily& retries_;
  obs::CounterFamily& ejections_;
  obs::CounterFamily& no_backend_;
  obs::CounterFamily& stream_errors_;
  obs::Histogram& decision_seconds_;
  obs::CounterFamily& decisions_;
  obs::CounterFamily& alias_routes_;
  obs::CounterFamily& prompt_blocks_;
  obs::CounterFamily& cached_blocks_;
  obs::GaugeFamily& breaker_state_;
  obs::GaugeFamily& healthy_;
  obs::GaugeFamily& routable_;
  obs::GaugeFamily& in_flight_;
  obs::GaugeFamily& busy_fraction_;
  obs::GaugeFamily& kv_usage_;
  obs::CounterFamily& bad_answers_;
  std::mutex mu_;  // Expose: the removed-backend bookkeeping
  struct SeenBackend {
    bool present = false;
    std::string pool;
    int32_t id = -1;
    std::array<int64_t, kNumBackendAnswers> num_bad_answers{};  // the Backend's counts already added
  };
  void AddBadAnswers(const Backend& backend, SeenBackend* seen);
  std::map<std::string, SeenBackend> seen_backends_;  // by url
};

}  // namespace surge::router
