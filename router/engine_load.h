// EngineLoad and the load formula: the one place that turns what an engine's /metrics said
// and this router's own in-flight count into the figures policies, cache-aware routing and
// the autoscaler compare. Header-only, so that router/prefix (below router/) uses it too.
#pragma once

#include <algorithm>
#include <cstdint>

namespace surge::router {

// What a backend's /metrics said last (surge serve's or vLLM's names); -1: not reported.
struct EngineLoad {
  double num_running = -1;
  double num_waiting = -1;
  double kv_usage = -1;       // [0, 1]
  double busy_fraction = -1;  // [0, 1]: time in engine steps (surge_engine_busy_fraction)
};

// Requests the engine said it holds (running + waiting); 0 when it said nothing.
inline double ReportedRequests(const EngineLoad& load) {
  return std::max(load.num_running, 0.0) + std::max(load.num_waiting, 0.0);
}

// THE load: requests on a backend, counted once. This router's in-flight requests are on
// it too, so the larger of the two is the best estimate -- fresh even when /metrics lags
// behind the decisions just taken, without counting a request twice.
inline double RequestLoad(double reported_requests, int32_t num_in_flight) {
  return std::max(reported_requests, static_cast<double>(num_in_flight));
}
inline double RequestLoad(const EngineLoad& load, int32_t num_in_flight) {
  return RequestLoad(ReportedRequests(load), num_in_flight);
}

// Views of it for least-load's scorers and the autoscaler:
// Fraction in use, [0, 1]: the KV usage when reported, else running / `capacity` (running:
// the larger of /metrics and our in-flight).
inline double LoadFraction(const EngineLoad& load, int32_t num_in_flight, double capacity) {
  if (load.kv_usage >= 0) return std::clamp(load.kv_usage, 0.0, 1.0);
  const double running = std::max(load.num_running, static_cast<double>(num_in_flight));
  return std::clamp(running / capacity, 0.0, 1.0);
}
// Requests waiting for it: its reported waiting count plus this router's in-flight ones.
inline double QueueLength(const EngineLoad& load, int32_t num_in_flight) {
  return std::max(load.num_waiting, 0.0) + num_in_flight;
}
// A replica's queue for the autoscaler: the engine's own waiting count, or this router's
// in-flight count when it reports none.
inline double QueueDepth(const EngineLoad& load, int32_t num_in_flight) {
  return load.num_waiting >= 0 ? load.num_waiting : static_cast<double>(num_in_flight);
}

}  // namespace surge::router
