// Backend: the router's view of one engine -- its address, pool and weight, its load from
// its own /metrics, this router's requests on it, and its health (router/backend_health.h:
// active checks, breaker, outlier ejection). Shared (shared_ptr) by the gateway and every
// request on it, so that a removed backend lives until its last request ends.
#pragma once

#include <atomic>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "router/backend_health.h"
#include "router/engine_load.h"
#include "router/route_config.h"

namespace surge::router {

int64_t SteadyNowMs();

// An engine answer the router reads in the background: its /metrics, /kv_config, /kv_events
// and /v1/models. One it cannot use is logged, counted (surge_router_backend_bad_answers_total)
// and ignored; the router goes on.
enum class BackendAnswer { kMetrics, kKvConfig, kKvEvents, kModels };
inline constexpr size_t kNumBackendAnswers = 4;
const char* BackendAnswerName(BackendAnswer answer);  // "metrics", "kv_config", ...

class Backend : public std::enable_shared_from_this<Backend> {
 public:
  Backend(int32_t id, BackendConfig config, const RouteConfig& route_config);

  int32_t id() const { return id_; }  // unique for the gateway's lifetime, never reused
  const std::string& url() const { return config_.url; }
  const std::string& pool() const { return config_.pool; }
  double weight() const { return config_.weight; }

  // May a new request go here now: healthy, not draining, not removed, breaker allows,
  // not ejected.
  bool IsRoutable(int64_t now_ms) const;
  bool healthy() const;
  bool draining() const;

  // The monitor's view: one /health result (200 ok, 503 draining, anything else failed).
  void OnHealthCheck(int http_status, const HealthConfig& health);
  void SetLoad(const EngineLoad& load);
  EngineLoad load() const;
  // One answer of `answer`'s kind that the router refused (`why`): counted, and logged the
  // 1st, 2nd, 4th, 8th, ... time so that a broken engine does not flood the log. Const: the
  // policies see backends through const views, and this is a statistic, not state.
  void RefuseAnswer(BackendAnswer answer, const Status& why) const;
  int64_t num_bad_answers(BackendAnswer answer) const;
  void SetAdminDraining(bool draining) { admin_draining_.store(draining); }
  void MarkRemoved() { removed_.store(true); }
  bool removed() const { return removed_.load(); }

  // The request path: one attempt sent, then its outcome (failures: connect errors,
  // timeouts, 5xx, broken streams).
  void OnAttemptStart(int64_t now_ms);
  void OnAttemptEnd(AttemptOutcome outcome, int64_t now_ms);
  // Asks the outlier detector; true when the backend should now be ejected.
  bool ShouldEject(int64_t now_ms);
  void Eject(int64_t now_ms);
  bool IsEjected(int64_t now_ms) const;
  BreakerState breaker_state() const;
  int32_t num_in_flight() const { return num_in_flight_.load(std::memory_order_relaxed); }

 private:
  const int32_t id_;
  const BackendConfig config_;
  std::atomic<bool> admin_draining_{false};
  std::atomic<bool> removed_{false};
  std::atomic<int32_t> num_in_flight_{0};
  mutable std::array<std::atomic<int64_t>, kNumBackendAnswers> num_bad_answers_{};
  mutable std::mutex mu_;
  EngineLoad load_;        // guarded by mu_
  BackendHealth health_;   // guarded by mu_: active checks, breaker, outlier ejection
};

}  // namespace surge::router
