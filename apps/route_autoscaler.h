// RouteAutoscaler: `surge route --autoscale POLICY_FILE` — the autoscale/ policy driving an
// actuator: the router's own spawned workers (WorkerActuator, the embedded default) or a
// Kubernetes Deployment's scale subresource (KubernetesActuator, with --kubernetes). Every
// interval it samples each policed pool (the gateway's routable backends: waiting, KV usage;
// replicas asked for but not ready as pending; the tiers' needs-capacity signal), asks
// PoolAutoscaler for the count and resizes the pool. A local scale-down drains: the worker
// leaves the gateway first (in-flight requests finish), then SIGTERM lets the engine finish.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "autoscale/autoscaler.h"
#include "router/gateway.h"

namespace surge {

class ScaleActuator {
 public:
  virtual ~ScaleActuator() = default;
  virtual bool Scales(const std::string& pool) const = 0;
  // Replicas asked for that are not serving yet (starting, restarting, being scheduled).
  virtual int NumPending(const std::string& pool, int num_ready) = 0;
  virtual Status Resize(const std::string& pool, int num_replicas) = 0;
};

namespace router {
class WorkerSupervisor;
}  // namespace router

// The spawned workers of the pools that spawn.
std::unique_ptr<ScaleActuator> MakeWorkerActuator(const router::RouteConfig& config, router::WorkerSupervisor& workers);

class RouteAutoscaler {
 public:
  // Every pool of `config` must be one the actuator scales (INVALID_ARGUMENT naming it).
  static StatusOr<std::unique_ptr<RouteAutoscaler>> Start(autoscale::AutoscaleConfig config, router::Gateway& gateway,
                                                          std::unique_ptr<ScaleActuator> actuator);
  ~RouteAutoscaler();  // Stop()
  void Stop();

 private:
  RouteAutoscaler(autoscale::AutoscaleConfig config, router::Gateway& gateway, std::unique_ptr<ScaleActuator> actuator);
  void Run();
  void Step();
  autoscale::PoolMetrics Sample(const std::string& pool);

  const autoscale::AutoscaleConfig config_;
  router::Gateway& gateway_;
  const std::unique_ptr<ScaleActuator> actuator_;
  std::vector<autoscale::PoolAutoscaler> pools_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace surge
