#include "apps/route_autoscaler.h"

#include <chrono>
#include <cstdio>

#include "router/backend.h"
#include "router/backend_set.h"

namespace surge {

StatusOr<std::unique_ptr<LocalAutoscaler>> LocalAutoscaler::Start(autoscale::AutoscaleConfig config,
                                                                  router::Gateway& gateway,
                                                                  router::WorkerSupervisor& workers) {
  for (const autoscale::PoolConfig& pool : config.pools) {
    auto it = gateway.config().pools.find(pool.name);
    if (it == gateway.config().pools.end() || it->second.spawn == 0) {
      return InvalidArgumentError("--autoscale: pool '" + pool.name +
                                  "' has no spawned workers to scale (--spawn N, or --pool NAME:spawn=N)");
    }
  }
  std::unique_ptr<LocalAutoscaler> scaler(new LocalAutoscaler(std::move(config), gateway, workers));
  scaler->thread_ = std::thread([raw = scaler.get()] { raw->Run(); });
  return scaler;
}

LocalAutoscaler::LocalAutoscaler(autoscale::AutoscaleConfig config, router::Gateway& gateway,
                                 router::WorkerSupervisor& workers)
    : config_(std::move(config)), gateway_(gateway), workers_(workers) {
  for (const autoscale::PoolConfig& pool : config_.pools) pools_.emplace_back(pool);
}

LocalAutoscaler::~LocalAutoscaler() { Stop(); }

void LocalAutoscaler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LocalAutoscaler::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, config_.interval, [this] { return stopping_; })) {
    lock.unlock();
    Step();
    lock.lock();
  }
}

autoscale::PoolMetrics LocalAutoscaler::Sample(const std::string& pool) const {
  std::vector<autoscale::ReplicaSample> replicas;
  const int64_t now_ms = router::SteadyNowMs();
  for (const std::shared_ptr<router::Backend>& backend : gateway_.backends().Snapshot()) {
    if (backend->pool() != pool || !backend->IsRoutable(now_ms)) continue;
    const router::EngineLoad load = backend->load();
    autoscale::ReplicaSample sample{.ready = true};
    // The engine's own queue, or this router's in-flight count when it reports none.
    sample.num_waiting = load.num_waiting >= 0 ? load.num_waiting : backend->num_in_flight();
    if (load.kv_usage >= 0) sample.kv_usage = load.kv_usage;
    replicas.push_back(sample);
  }
  for (const router::WorkerInfo& worker : workers_.workers()) {
    // Starting, or restarting after a crash: capacity coming (the pending-replica guard).
    const bool coming = worker.state == router::WorkerState::kStarting || worker.state == router::WorkerState::kBackoff;
    if (worker.pool == pool && coming) replicas.push_back({.ready = false});
  }
  return autoscale::PoolMetrics::FromReplicas(replicas, std::nullopt, gateway_.NeedsCapacity(pool));
}

void LocalAutoscaler::Step() {
  const autoscale::Instant now =
      std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  for (autoscale::PoolAutoscaler& pool : pools_) {
    const autoscale::PoolMetrics metrics = Sample(pool.name());
    const autoscale::Decision decision = pool.Decide(now, metrics);
    if (decision.desired_replicas == decision.current_replicas) continue;
    std::fprintf(stderr, "surge route: autoscale pool %s: %d -> %d (%s)\n", pool.name().c_str(),
                 decision.current_replicas, decision.desired_replicas, decision.reason.c_str());
    if (Status status = workers_.Resize(pool.name(), decision.desired_replicas); !status.ok()) {
      std::fprintf(stderr, "surge route: autoscale pool %s: %s\n", pool.name().c_str(), status.message().c_str());
    }
  }
}

}  // namespace surge
