#include "apps/route_autoscaler.h"

#include <chrono>
#include <cstdio>

#include "router/backend.h"
#include "router/backend_set.h"
#include "router/workers/worker_supervisor.h"

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
  }
  std::unique_ptr<RouteAutoscaler> scaler(new RouteAutoscaler(std::move(config), gateway, std::move(actuator)));
  scaler->thread_ = std::thread([raw = scaler.get()] { raw->Run(); });
  return scaler;
}

RouteAutoscaler::RouteAutoscaler(autoscale::AutoscaleConfig config, router::Gateway& gateway,
                                 std::unique_ptr<ScaleActuator> actuator)
    : config_(std::move(config)), gateway_(gateway), actuator_(std::move(actuator)) {
  for (const autoscale::PoolConfig& pool : config_.pools) pools_.emplace_back(pool);
}

RouteAutoscaler::~RouteAutoscaler() { Stop(); }

void RouteAutoscaler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RouteAutoscaler::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, config_.interval, [this] { return stopping_; })) {
    lock.unlock();
    Step();
    lock.lock();
  }
}

autoscale::PoolMetrics RouteAutoscaler::Sample(const std::string& pool) {
  std::vector<autoscale::ReplicaSample> replicas;
  const int64_t now_ms = router::SteadyNowMs();
  for (const std::shared_ptr<router::Backend>& backend : gateway_.backends().Snapshot()) {
    if (backend->pool() != pool || !backend->IsRoutable(now_ms)) continue;
    const router::EngineLoad load = backend->load();
    autoscale::ReplicaSample sample{.ready = true};
    // The engine's own queue, or this router's in-flight count when it reports none.
    sample.num_waiting = load.num_waiting >= 0 ? load.num_waiting : backend->num_in_flight();
    if (load.kv_usage >= 0) sample.kv_usage = load.kv_usage;
    if (load.busy_fraction >= 0) sample.busy_fraction = load.busy_fraction;
    replicas.push_back(sample);
  }
  // Capacity coming (the pending-replica guard): loading, restarting, being scheduled.
  const int num_pending = actuator_->NumPending(pool, static_cast<int>(replicas.size()));
  for (int i = 0; i < num_pending; ++i) replicas.push_back({.ready = false});
  return autoscale::PoolMetrics::FromReplicas(replicas, std::nullopt, gateway_.NeedsCapacity(pool));
}

void RouteAutoscaler::Step() {
  const autoscale::Instant now =
      std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  for (autoscale::PoolAutoscaler& pool : pools_) {
    const autoscale::PoolMetrics metrics = Sample(pool.name());
    const autoscale::Decision decision = pool.Decide(now, metrics);
    if (decision.desired_replicas == decision.current_replicas) continue;
    std::fprintf(stderr, "surge route: autoscale pool %s: %d -> %d (%s)\n", pool.name().c_str(),
                 decision.current_replicas, decision.desired_replicas, decision.reason.c_str());
    if (Status status = actuator_->Resize(pool.name(), decision.desired_replicas); !status.ok()) {
      std::fprintf(stderr, "surge route: autoscale pool %s: %s\n", pool.name().c_str(), status.message().c_str());
    }
  }
}

// The router's own workers: pending = starting or restarting after a crash.
class WorkerActuator final : public ScaleActuator {
 public:
  WorkerActuator(const router::RouteConfig& config, router::WorkerSupervisor& workers)
      : config_(config), workers_(workers) {}
  bool Scales(const std::string& pool) const override {
    auto it = config_.pools.find(pool);
    return it != config_.pools.end() && it->second.spawn > 0;
  }
  int NumPending(const std::string& pool, int) override {
    int num = 0;
    for (const router::WorkerInfo& worker : workers_.workers()) {
      const bool coming = worker.state == router::WorkerState::kStarting || worker.state == router::WorkerState::kBackoff;
      num += worker.pool == pool && coming ? 1 : 0;
    }
    return num;
  }
  Status Resize(const std::string& pool, int num_replicas) override { return workers_.Resize(pool, num_replicas); }

 private:
  const router::RouteConfig& config_;
  router::WorkerSupervisor& workers_;
};

std::unique_ptr<ScaleActuator> MakeWorkerActuator(const router::RouteConfig& config, router::WorkerSupervisor& workers) {
  return std::make_unique<WorkerActuator>(config, workers);
}

}  // namespace surge
