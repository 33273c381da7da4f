#include "fleet/route_autoscaler.h"

#include <chrono>
#include <cstdio>
#include <exception>

#include "router/backend.h"
#include "router/backend_set.h"
#include "router/engine_load.h"

namespace surge {

StatusOr<std::unique_ptr<RouteAutoscaler>> RouteAutoscaler::Start(autoscale::AutoscaleConfig config,
                                                                  router::Gateway& gateway,
                                                                  std::unique_ptr<ScaleActuator> actuator) {
  for (const autoscale::PoolConfig& pool : config.pools) {
    if (!actuator->Scales(pool.name)) {
      return InvalidArgumentError("--autoscale: pool '" + pool.name +
                                  "' has nothing to scale (spawned workers: --spawn N or --pool NAME:spawn=N; "
                                  "on Kubernetes: --kubernetes-deployment, the default pool)");
    }
    if (!pool.classes.empty() && !actuator->PlacesClasses()) {
      return InvalidArgumentError("--autoscale: pool '" + pool.name +
                                  "' has capacity classes, which only spawned workers place (on Kubernetes, run "
                                  "one Deployment per class, each with its own HPA or KEDA ScaledObject)");
    }
  }
  std::unique_ptr<RouteAutoscaler> scaler(new RouteAutoscaler(std::move(config), gateway, std::move(actuator)));
  const PeriodicThread::Duration interval = scaler->config_.interval;
  scaler->thread_.Start(interval, [raw = scaler.get()] { raw->Step(); }, interval);
  return scaler;
}

RouteAutoscaler::RouteAutoscaler(autoscale::AutoscaleConfig config, router::Gateway& gateway,
                                 std::unique_ptr<ScaleActuator> actuator)
    : config_(std::move(config)),
      gateway_(gateway),
      actuator_(std::move(actuator)),
      replicas_(gateway.metrics_registry().AddGaugeFamily(
          "surge_autoscale_replicas", "Replicas on the autoscaler's books, by pool and capacity class",
          {"pool", "class"})),
      usd_per_hour_(gateway.metrics_registry().AddGaugeFamily(
          "surge_autoscale_cost_usd_per_hour", "What the pool's replicas of a class cost per hour (replicas x price)",
          {"pool", "class"})),
      cost_usd_(gateway.metrics_registry().AddCounterFamily(
          "surge_autoscale_cost_usd_total", "Cost of the replicas since start-up, by pool and class", {"pool", "class"})),
      desired_(gateway.metrics_registry().AddGaugeFamily("surge_autoscale_desired_replicas",
                                                         "The policy's last desired replica count", {"pool"})),
      errors_(gateway.metrics_registry().AddCounterFamily(
          "surge_autoscale_errors_total",
          "Autoscaler steps that failed, by pool and op: resize (the actuator refused or the Kubernetes API "
          "failed), step (an unexpected error; the loop went on)",
          {"pool", "op"})) {
  for (const autoscale::PoolConfig& pool : config_.pools) {
    pools_.emplace_back(pool);
    for (const char* op : {"resize", "step"}) errors_.WithLabels({pool.name, op});  // rate() reads 0, not nothing
  }
}

RouteAutoscaler::~RouteAutoscaler() { Stop(); }

void RouteAutoscaler::Stop() { thread_.Stop(); }

bool RouteAutoscaler::Polices(const std::string& pool) const {
  for (const autoscale::PoolConfig& policed : config_.pools) {
    if (policed.name == pool) return true;
  }
  return false;
}

Status RouteAutoscaler::RequestScaleUp(const std::string& pool) {
  if (!Polices(pool)) return NotFoundError("--autoscale does not scale pool '" + pool + "'");
  std::lock_guard<std::mutex> lock(mu_);
  scale_up_requests_.insert(pool);
  return OkStatus();
}

autoscale::PoolMetrics RouteAutoscaler::Sample(const std::string& pool) {
  std::vector<autoscale::ReplicaSample> replicas;
  const int64_t now_ms = router::SteadyNowMs();
  for (const std::shared_ptr<router::Backend>& backend : gateway_.backends().Snapshot()) {
    if (backend->pool() != pool || !backend->IsRoutable(now_ms)) continue;
    const router::EngineLoad load = backend->load();
    autoscale::ReplicaSample sample{.ready = true};
    // The engine's own queue, or this router's in-flight count when it reports none.
    sample.num_waiting = router::QueueDepth(load, backend->num_in_flight());
    if (load.kv_usage >= 0) sample.kv_usage = load.kv_usage;
    if (load.busy_fraction >= 0) sample.busy_fraction = load.busy_fraction;
    replicas.push_back(sample);
  }
  // Capacity coming (the pending-replica guard): loading, restarting, being scheduled.
  const int num_pending = actuator_->NumPending(pool, static_cast<int>(replicas.size()));
  for (int i = 0; i < num_pending; ++i) replicas.push_back({.ready = false});
  bool requested = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requested = scale_up_requests_.erase(pool) > 0;
  }
  return autoscale::PoolMetrics::FromReplicas(replicas, std::nullopt, gateway_.NeedsCapacity(pool) || requested);
}

void RouteAutoscaler::Step() {
  const autoscale::Instant now =
      std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  for (autoscale::PoolAutoscaler& pool : pools_) {
    // The edge of this thread: whatever a step throws fails that pool's step, not the process.
    try {
      StepPool(pool, now);
    } catch (const std::exception& e) {
      errors_.WithLabels({pool.name(), "step"}).Increment();
      std::fprintf(stderr, "surge route: autoscale pool %s: step failed: %s\n", pool.name().c_str(), e.what());
    }
  }
  last_step_ = now;
}

void RouteAutoscaler::StepPool(autoscale::PoolAutoscaler& pool, autoscale::Instant now) {
  actuator_->Reconcile(pool.name(), pool.classes(), now);
  const autoscale::PoolMetrics metrics = Sample(pool.name());
  const autoscale::Decision decision = pool.Decide(now, metrics);
  Publish(pool, decision, now);
  if (decision.desired_replicas == decision.current_replicas) return;
  std::fprintf(stderr, "surge route: autoscale pool %s: %d -> %d (%s)\n", pool.name().c_str(),
               decision.current_replicas, decision.desired_replicas, decision.reason.c_str());
  Status status = actuator_->Resize(pool.name(), decision.desired_replicas, pool.classes(), now);
  if (!status.ok()) {
    errors_.WithLabels({pool.name(), "resize"}).Increment();
    std::fprintf(stderr, "surge route: autoscale pool %s: %s\n", pool.name().c_str(), status.message().c_str());
  }
}

void RouteAutoscaler::Publish(autoscale::PoolAutoscaler& pool, const autoscale::Decision& decision,
                              autoscale::Instant now) {
  const autoscale::CapacityClasses& classes = pool.classes();
  const double hours = last_step_ == autoscale::Instant{} ? 0 : std::chrono::duration<double>(now - last_step_).count() / 3600;
  for (size_t i = 0; i < classes.classes().size(); ++i) {
    const std::string& name = classes.classes()[i].name;
    replicas_.WithLabels({pool.name(), name}).Set(classes.NumReplicas(i));
    usd_per_hour_.WithLabels({pool.name(), name}).Set(classes.UsdPerHour(i));
    cost_usd_.WithLabels({pool.name(), name}).Increment(classes.UsdPerHour(i) * hours);
  }
  desired_.WithLabels({pool.name()}).Set(decision.desired_replicas);
}

}  // namespace surge
