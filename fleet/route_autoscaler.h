// RouteAutoscaler: `surge route --autoscale POLICY_FILE` — the autoscale/ policy driving an
// actuator: the router's own spawned workers (WorkerActuator, the embedded default) or a
// Kubernetes Deployment's scale subresource (KubernetesActuator, with --kubernetes). Every
// interval it samples each policed pool (the gateway's routable backends: waiting, KV usage;
// replicas asked for but not ready as pending; the tiers' needs-capacity signal), asks
// PoolAutoscaler for the count and resizes the pool. A local scale-down drains: the worker
// leaves the gateway first (in-flight requests finish), then SIGTERM lets the engine finish.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "autoscale/autoscaler.h"
#include "base/periodic_thread.h"
#include "obs/metrics.h"
#include "router/gateway.h"

namespace surge {

// Called from the autoscaler's thread only.
class ScaleActuator {
 public:
  virtual ~ScaleActuator() = default;
  virtual bool Scales(const std::string& pool) const = 0;
  // Whether Resize places replicas in the pool's capacity classes (and Reconcile keeps the
  // books); a pool with classes needs an actuator that does.
  virtual bool PlacesClasses() const { return false; }
  // Replicas asked for that are not serving yet (starting, restarting, being scheduled).
  virtual int NumPending(const std::string& pool, int num_ready) = 0;
  // `classes`: the pool's books, which an actuator that places classes keeps current.
  virtual Status Resize(const std::string& pool, int num_replicas, autoscale::CapacityClasses& classes,
                        autoscale::Instant now) = 0;
  // Each interval before sampling: replicas that became ready, reclaimed, or finished moving.
  virtual void Reconcile(const std::string& pool, autoscale::CapacityClasses& classes, autoscale::Instant now) {}
};

class RouteAutoscaler {
 public:
  // Every pool of `config` must be one the actuator scales (INVALID_ARGUMENT naming it).
  static StatusOr<std::unique_ptr<RouteAutoscaler>> Start(autoscale::AutoscaleConfig config, router::Gateway& gateway,
                                                          std::unique_ptr<ScaleActuator> actuator);
  ~RouteAutoscaler();  // Stop()
  void Stop();

  // Whether `pool` is one the policy scales.
  bool Polices(const std::string& pool) const;
  // An alarm's scale_up: the next step counts it as a scale-up input for `pool`, as the
  // tiers' needs-capacity signal (one more replica than are ready, pending ones included).
  // NOT_FOUND for a pool the policy does not scale.
  Status RequestScaleUp(const std::string& pool);

 private:
  RouteAutoscaler(autoscale::AutoscaleConfig config, router::Gateway& gateway, std::unique_ptr<ScaleActuator> actuator);
  void Step();
  void StepPool(autoscale::PoolAutoscaler& pool, autoscale::Instant now);
  autoscale::PoolMetrics Sample(const std::string& pool);
  void Publish(autoscale::PoolAutoscaler& pool, const autoscale::Decision& decision, autoscale::Instant now);

  const autoscale::AutoscaleConfig config_;
  router::Gateway& gateway_;
  const std::unique_ptr<ScaleActuator> actuator_;
  std::vector<autoscale::PoolAutoscaler> pools_;
  // Per pool and class: replicas, price, cost so far, reclaims; per pool: the desired count.
  obs::GaugeFamily& replicas_;
  obs::GaugeFamily& usd_per_hour_;
  obs::CounterFamily& cost_usd_;
  obs::GaugeFamily& desired_;
  obs::CounterFamily& errors_;  // per pool and op: resize, step
  autoscale::Instant last_step_{};  // the cost integral's previous point
  std::mutex mu_;
  std::set<std::string> scale_up_requests_;  // guarded by mu_; taken by the next Step
  PeriodicThread thread_;
};

}  // namespace surge
