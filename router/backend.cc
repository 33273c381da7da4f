#include "router/backend.h"

#include <chrono>

#include "base/logging.h"

namespace surge::router {

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Backend::Backend(int32_t id, BackendConfig config, const RouteConfig& route_config)
    : id_(id), config_(std::move(config)), health_(route_config) {}

bool Backend::IsRoutable(int64_t now_ms) const {
  if (admin_draining_.load() || removed_.load()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return health_.AllowsRouting(now_ms);
}

bool Backend::healthy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_.healthy();
}

bool Backend::draining() const {
  if (admin_draining_.load()) return true;
  std::lock_guard<std::mutex> lock(mu_);
  return health_.draining();
}

void Backend::OnHealthCheck(int http_status, const HealthConfig& health) {
  std::lock_guard<std::mutex> lock(mu_);
  health_.OnHealthCheck(http_status, health);
}

void Backend::SetLoad(const EngineLoad& load) {
  std::lock_guard<std::mutex> lock(mu_);
  load_ = load;
}

const char* BackendAnswerName(BackendAnswer answer) {
  switch (answer) {
    case BackendAnswer::kMetrics: return "metrics";
    case BackendAnswer::kKvConfig: return "kv_config";
    case BackendAnswer::kKvEvents: return "kv_events";
    case BackendAnswer::kModels: return "models";
  }
  return "unknown";
}

void Backend::RefuseAnswer(BackendAnswer answer, const Status& why) const {
  const int64_t count = num_bad_answers_[static_cast<size_t>(answer)].fetch_add(1, std::memory_order_relaxed) + 1;
  if ((count & (count - 1)) != 0) return;  // logged at powers of two only
  LOG(WARNING) << "router: " << url() << ": its " << BackendAnswerName(answer) << " answer was refused and ignored ("
               << count << " so far): " << why.message();
}

int64_t Backend::num_bad_answers(BackendAnswer answer) const {
  return num_bad_answers_[static_cast<size_t>(answer)].load(std::memory_order_relaxed);
}

EngineLoad Backend::load() const {
  std::lock_guard<std::mutex> lock(mu_);
  return load_;
}

void Backend::OnAttemptStart(int64_t now_ms) {
  num_in_flight_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  health_.OnSent(now_ms);
}

void Backend::OnAttemptEnd(AttemptOutcome outcome, int64_t now_ms) {
  num_in_flight_.fetch_sub(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  health_.OnOutcome(outcome, now_ms);
}

bool Backend::ShouldEject(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  return health_.WantsOut(now_ms);
}

void Backend::Eject(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  health_.TakeOut(now_ms);
}

bool Backend::IsEjected(int64_t now_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_.IsEjected(now_ms);
}

BreakerState Backend::breaker_state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_.breaker_state();
}

}  // namespace surge::router
