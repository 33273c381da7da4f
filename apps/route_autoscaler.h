// LocalAutoscaler: `surge route --spawn ... --autoscale POLICY_FILE` — the autoscale/ policy
// driving the router's own spawned workers (the local actuator). Every interval it samples
// each policed pool (the gateway's backends: waiting, KV usage; workers still starting as
// pending; the tiers' needs-capacity signal), asks PoolAutoscaler for the count and resizes
// the pool. Scaling down drains: the supervisor takes the worker out of the gateway first
// (no new requests; in-flight ones finish), then SIGTERM lets the engine finish its own.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "autoscale/autoscaler.h"
#include "router/gateway.h"
#include "router/workers/worker_supervisor.h"

namespace surge {

class LocalAutoscaler {
 public:
  // Every pool of `config` must spawn workers (INVALID_ARGUMENT naming it otherwise).
  static StatusOr<std::unique_ptr<LocalAutoscaler>> Start(autoscale::AutoscaleConfig config, router::Gateway& gateway,
                                                          router::WorkerSupervisor& workers);
  ~LocalAutoscaler();  // Stop()
  void Stop();

 private:
  LocalAutoscaler(autoscale::AutoscaleConfig config, router::Gateway& gateway, router::WorkerSupervisor& workers);
  void Run();
  void Step();
  autoscale::PoolMetrics Sample(const std::string& pool) const;

  const autoscale::AutoscaleConfig config_;
  router::Gateway& gateway_;
  router::WorkerSupervisor& workers_;
  std::vector<autoscale::PoolAutoscaler> pools_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace surge
