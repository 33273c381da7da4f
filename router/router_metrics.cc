#include "router/router_metrics.h"

namespace surge::router {

const char* RouterErrorKind(int status_code) {
  switch (status_code) {
    case 401:
    case 403: return "unauthorized";
    case 429: return "rate_limited";
    case 499: return "client_disconnected";
    case 504: return "timeout";
    default: break;
  }
  if (status_code >= 500) return "backend_error";
  return status_code >= 400 ? "bad_request" : "";
}

RouterMetrics::RouterMetrics()
    : requests_(registry_.AddCounterFamily("surge_router_requests_total",
                                           "Client requests answered, by the backend that answered last, pool, "
                                           "policy and HTTP status (499: the client left)",
                                           {"backend", "pool", "policy", "code"})),
      errors_(registry_.AddCounterFamily("surge_router_errors_total",
                                         "Client requests that ended in an error, by kind (no_backend, backend_error, "
                                         "timeout, rate_limited, unauthorized, bad_request, client_disconnected); "
                                         "a stream broken after its first byte counts too",
                                         {"kind"})),
      first_byte_seconds_(registry_.AddHistogramFamily(
          "surge_router_time_to_first_byte_seconds",
          "From arrival at the router to the first body byte sent to the client (a stream's first "
          "event, or the whole answer), by pool",
          {"pool"}, obs::RequestLatencyBuckets())),
      duration_seconds_(registry_.AddHistogramFamily("surge_router_request_duration_seconds",
                                                     "From arrival at the router to the last byte, by pool", {"pool"},
                                                     obs::RequestLatencyBuckets())),
      active_connections_(registry_.AddGauge("surge_http_active_connections",
                                             "Open client connections (the scraper's own included)")),
      retries_(registry_.AddCounterFamily("surge_router_retries_total",
                                          "Attempts sent to another backend after a failed one", {"pool"})),
      ejections_(registry_.AddCounterFamily("surge_router_ejections_total",
                                            "Backends ejected for their error rate", {"backend"})),
      no_backend_(registry_.AddCounterFamily("surge_router_no_backend_total",
                                             "Requests that found no routable backend in their pool", {"pool"})),
      stream_errors_(registry_.AddCounterFamily("surge_router_stream_errors_total",
                                                "Streams that broke after bytes reached the client", {"backend"})),
      decision_seconds_(registry_.AddHistogram("surge_router_decision_seconds",
                                               "Time to choose a backend (filter and policy)",
                                               obs::ExponentialBuckets(1e-6, 2, 16))),
      decisions_(registry_.AddCounterFamily("surge_router_policy_decisions_total",
                                            "Backend choices by pool, policy and why (pick; cache-aware: cache, "
                                            "balance_fallback, no_prompt, no_kv_config)",
                                            {"pool", "policy", "decision"})),
      alias_routes_(registry_.AddCounterFamily("surge_router_alias_routes_total",
                                               "Requests to a complexity alias (model \"auto\"), by chosen pool and the "
                                               "rule that decided (prompt_tokens, max_tokens, reasoning, code, simple)",
                                               {"alias", "pool", "reason"})),
      prompt_blocks_(registry_.AddCounterFamily("surge_router_cache_aware_prompt_blocks_total",
                                                "cache-aware: full KV blocks of the prompts it routed", {"pool"})),
      cached_blocks_(registry_.AddCounterFamily(
          "surge_router_cache_aware_cached_blocks_total",
          "cache-aware: of those, blocks believed cached on the chosen backend (the hit estimate is "
          "the ratio of the two rates)",
          {"pool"})),
      breaker_state_(registry_.AddGaugeFamily("surge_router_backend_breaker_state",
                                              "Circuit breaker per backend: 0 closed, 1 open, 2 half-open",
                                              {"backend"})),
      healthy_(registry_.AddGaugeFamily("surge_router_backend_healthy",
                                        "1 when the backend's last /health checks passed", {"backend"})),
      routable_(registry_.AddGaugeFamily("surge_router_backend_routable",
                                         "1 when new requests may go to the backend now", {"backend"})),
      in_flight_(registry_.AddGaugeFamily("surge_router_backend_in_flight",
                                          "This router's requests on the backend now", {"backend"})),
      busy_fraction_(registry_.AddGaugeFamily("surge_router_backend_busy_fraction",
                                              "The backend's engine busy fraction, from its last /metrics scrape",
                                              {"backend", "pool"})),
      kv_usage_(registry_.AddGaugeFamily("surge_router_backend_kv_usage_ratio",
                                         "The backend's KV cache usage (0..1), from its last /metrics scrape",
                                         {"backend", "pool"})),
      bad_answers_(registry_.AddCounterFamily(
          "surge_router_backend_bad_answers_total",
          "Engine answers the router refused and ignored (not JSON, too deep, a field of the wrong type or out "
          "of range), by backend and answer (metrics, kv_config, kv_events, models)",
          {"backend", "answer"})) {}

void RouterMetrics::CountDecision(std::string_view pool, std::string_view policy, const PickResult& pick) {
  decisions_.WithLabels({pool, policy, pick.decision}).Increment();
  if (pick.num_prompt_blocks == 0) return;
  prompt_blocks_.WithLabels({pool}).Increment(static_cast<double>(pick.num_prompt_blocks));
  cached_blocks_.WithLabels({pool}).Increment(static_cast<double>(pick.num_cached_blocks));
}

void RouterMetrics::CountRequest(std::string_view backend, std::string_view pool, std::string_view policy,
                                 int status_code) {
  requests_.WithLabels({backend, pool, policy, std::to_string(status_code)}).Increment();
}

void RouterMetrics::ObserveRequest(std::string_view pool, double first_byte_seconds, double duration_seconds) {
  if (first_byte_seconds >= 0) first_byte_seconds_.WithLabels({pool}).Observe(first_byte_seconds);
  duration_seconds_.WithLabels({pool}).Observe(duration_seconds);
}

// The counts a Backend keeps (its callbacks run where RouterMetrics is not at hand) become
// counter increments here; a new Backend at the same URL starts from 0 again.
void RouterMetrics::AddBadAnswers(const Backend& backend, SeenBackend* seen) {
  for (size_t i = 0; i < kNumBackendAnswers; ++i) {
    const auto answer = static_cast<BackendAnswer>(i);
    const int64_t total = backend.num_bad_answers(answer);
    obs::Counter& counter = bad_answers_.WithLabels({backend.url(), BackendAnswerName(answer)});
    if (total > seen->num_bad_answers[i]) counter.Increment(static_cast<double>(total - seen->num_bad_answers[i]));
    seen->num_bad_answers[i] = total;
  }
}

std::string RouterMetrics::Expose(std::span<const std::shared_ptr<Backend>> backends, int64_t now_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [url, seen] : seen_backends_) seen.present = false;
    for (const std::shared_ptr<Backend>& backend : backends) {
      const std::string& url = backend->url();
      SeenBackend& seen = seen_backends_[url];
      if (seen.id != backend->id()) seen = {.present = true, .pool = backend->pool(), .id = backend->id()};
      seen.present = true;
      AddBadAnswers(*backend, &seen);
      breaker_state_.WithLabels({url}).Set(static_cast<double>(backend->breaker_state()));
      healthy_.WithLabels({url}).Set(backend->healthy() ? 1 : 0);
      routable_.WithLabels({url}).Set(backend->IsRoutable(now_ms) ? 1 : 0);
      in_flight_.WithLabels({url}).Set(backend->num_in_flight());
      const EngineLoad load = backend->load();
      // Only what the engine reports: a backend without the metric has no series.
      if (load.busy_fraction >= 0) busy_fraction_.WithLabels({url, backend->pool()}).Set(load.busy_fraction);
      if (load.kv_usage >= 0) kv_usage_.WithLabels({url, backend->pool()}).Set(load.kv_usage);
    }
    // A removed backend's series go (a restarted or retired worker must not read as an
    // unhealthy backend forever: alarm rules and dashboards would see a ghost).
    for (auto it = seen_backends_.begin(); it != seen_backends_.end();) {
      if (it->second.present) {
        ++it;
        continue;
      }
      for (obs::GaugeFamily* family : {&breaker_state_, &healthy_, &routable_, &in_flight_}) family->Remove({it->first});
      for (obs::GaugeFamily* family : {&busy_fraction_, &kv_usage_}) family->Remove({it->first, it->second.pool});
      for (size_t answer = 0; answer < kNumBackendAnswers; ++answer) {
        bad_answers_.Remove({it->first, BackendAnswerName(static_cast<BackendAnswer>(answer))});
      }
      it = seen_backends_.erase(it);
    }
  }
  process_.Refresh();
  return registry_.Expose();
}

}  // namespace surge::router
