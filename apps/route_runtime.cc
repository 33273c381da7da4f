#include "apps/route_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "fleet/route_alarms.h"
#include "fleet/route_embeddings.h"
#include "fleet/route_kubernetes.h"
#include "fleet/worker_actuator.h"
#include "router/backend_set.h"

namespace surge {
namespace {

std::vector<router::WorkerSpec> WorkerSpecs(const router::RouteConfig& config) {
  std::vector<router::WorkerSpec> specs;
  for (const auto& [name, pool] : config.pools) {
    if (pool.spawn == 0) continue;
    std::vector<std::string> engine_args = pool.engine_args.empty() ? config.engine_args : pool.engine_args;
    specs.push_back({.pool = name, .num_workers = static_cast<int32_t>(pool.spawn), .surge_binary = "/proc/self/exe",
                     .model_path = pool.model.empty() ? config.model : pool.model,
                     .engine_args = std::move(engine_args)});
  }
  return specs;
}

// The pools' spawned workers, joining the gateway as each answers /health (and leaving it
// when it exits); null when no pool spawns. Waits until all are up: a worker that exits
// before its first /health (a bad model or engine flag) is an error, not a retry loop.
StatusOr<std::unique_ptr<router::WorkerSupervisor>> StartWorkers(router::Gateway& gateway) {
  const router::RouteConfig& config = gateway.config();
  std::vector<router::WorkerSpec> specs = WorkerSpecs(config);
  if (specs.empty()) return std::unique_ptr<router::WorkerSupervisor>();
  router::SupervisorOptions options;
  options.health_timeout_ms = config.worker_health_timeout_ms;
  options.log_dir = config.worker_log_dir;
  // Above the workers' own --drain-timeout default (30 s): SIGTERM lets them drain.
  options.stop_timeout_ms = std::max<int64_t>(35'000, config.drain_timeout_ms + 5'000);
  auto on_event = [&gateway](const router::WorkerEvent& event) {
    Status status = event.kind == router::WorkerEvent::kUp ? gateway.AddBackend(event.pool, event.url)
                                                           : gateway.RemoveBackend(event.url);
    if (!status.ok()) std::fprintf(stderr, "surge route: worker %s: %s\n", event.name.c_str(), status.message().c_str());
  };
  ASSIGN_OR_RETURN(std::unique_ptr<router::WorkerSupervisor> supervisor,
                   router::WorkerSupervisor::Start(std::move(specs), options, on_event));
  RETURN_IF_ERROR(supervisor->WaitUntilUp(config.worker_health_timeout_ms));
  // WaitUntilUp sees the workers up; their kUp events (AddBackend) follow on the
  // supervisor's thread: the router is ready once the gateway has them all.
  size_t num_expected = config.backends.size();
  for (const auto& [name, pool] : config.pools) num_expected += static_cast<size_t>(pool.spawn);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (gateway.backends().Snapshot().size() < num_expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return supervisor;
}

// The Batch API on the gateway (--data-dir), or its routes answering 404 saying how to turn
// it on; null when off.
StatusOr<std::unique_ptr<batch::BatchService>> MountBatchApi(router::Gateway& gateway,
                                                             std::optional<batch::BatchServiceOptions> options) {
  const batch::AddRoute add = [&gateway](std::string method, std::string path, net::Handler handler, size_t max_body_bytes) {
    gateway.AddRoute(std::move(method), std::move(path), std::move(handler), max_body_bytes);
  };
  if (!options) {
    batch::MountBatchApiOff(add, "start surge route with --data-dir DIR");
    return std::unique_ptr<batch::BatchService>();
  }
  options->metrics = &gateway.metrics_registry();
  ASSIGN_OR_RETURN(std::unique_ptr<batch::BatchService> service, batch::BatchService::Open(*std::move(options)));
  service->Mount(add);
  return service;
}

// Spawned workers when there are any, else the Kubernetes Deployment when discovery is on.
StatusOr<std::unique_ptr<ScaleActuator>> MakeActuator(const router::RouteConfig& config,
                                                     router::WorkerSupervisor* workers) {
  if (workers != nullptr) return MakeWorkerActuator(config, *workers);
  const router::RouteConfig::Kubernetes& kube = config.kubernetes;
  if (!kube.target.empty()) return MakeKubernetesActuator({kube.target, kube.port_name, kube.deployment});
  return InvalidArgumentError(
      "--autoscale scales spawned workers (--spawn N) or a Kubernetes Deployment (--kubernetes-deployment)");
}

}  // namespace

std::unique_ptr<RouteRuntime> RouteRuntime::Start(RouteSetup setup, RouteStartError* error) {
  std::unique_ptr<RouteRuntime> runtime(new RouteRuntime());
  int exit_code = 2;
  Status status = runtime->StartGateway(setup, &exit_code);
  if (status.ok()) status = runtime->StartFleet(setup);
  if (!status.ok()) {
    *error = {std::move(status), exit_code};
    runtime->Shutdown(std::chrono::milliseconds(0));
    return nullptr;
  }
  runtime->StartBatchWork(std::move(setup.queue));
  return runtime;
}

// The embeddings worker first: the gateway's config then holds its URL.
Status RouteRuntime::StartGateway(RouteSetup& setup, int* exit_code) {
  StatusOr<std::unique_ptr<router::WorkerSupervisor>> embedder = StartEmbeddingsWorker(&setup.config);
  if (!embedder.ok()) return embedder.status().WithContext("--embeddings-spawn");
  embedder_ = std::move(embedder).value();
  ASSIGN_OR_RETURN(gateway_, router::Gateway::Create(std::move(setup.config)));  // a policy name, a URL
  *exit_code = 1;
  StatusOr<std::unique_ptr<batch::BatchService>> batch_api = MountBatchApi(*gateway_, std::move(setup.batch));
  if (!batch_api.ok()) return batch_api.status().WithContext("--data-dir");
  batch_api_ = std::move(batch_api).value();
  RETURN_IF_ERROR(gateway_->Start());
  listening_ = true;
  *exit_code = 2;
  ASSIGN_OR_RETURN(workers_, StartWorkers(*gateway_));  // a bad model path or engine flag
  return OkStatus();
}

Status RouteRuntime::StartFleet(RouteSetup& setup) {
  const router::RouteConfig::Kubernetes& kube = gateway_->config().kubernetes;
  if (!kube.target.empty()) {
    ASSIGN_OR_RETURN(discovery_, StartKubernetesDiscovery({kube.target, kube.port_name, kube.deployment}, *gateway_));
  }
  if (setup.autoscale) {
    ASSIGN_OR_RETURN(std::unique_ptr<ScaleActuator> actuator, MakeActuator(gateway_->config(), workers_.get()));
    ASSIGN_OR_RETURN(autoscaler_, RouteAutoscaler::Start(*std::move(setup.autoscale), *gateway_, std::move(actuator)));
  }
  if (setup.alarms) {
    ASSIGN_OR_RETURN(alarms_, StartRouteAlarms(*std::move(setup.alarms), *gateway_, workers_.get(), autoscaler_.get()));
  }
  return OkStatus();
}

// After the workers are up: the batch lines and the queue's messages go through this router,
// at batch tier.
void RouteRuntime::StartBatchWork(std::optional<queue::QueueOptions> queue) {
  const std::string base_url = batch::LoopbackBaseUrl(gateway_->config().host, gateway_->port());
  if (batch_api_) batch_api_->StartRunner(base_url);
  if (queue) {
    queue->base_url = base_url;
    queue->metrics = &gateway_->metrics_registry();
    consumer_ = std::make_unique<queue::QueueConsumer>(*std::move(queue));
  }
}

RouteRuntime::~RouteRuntime() { Shutdown(std::chrono::milliseconds(0)); }

void RouteRuntime::Shutdown(std::chrono::milliseconds drain_timeout) {
  if (shut_down_) return;
  shut_down_ = true;
  if (consumer_) consumer_->Stop();      // unacked messages go back to the queue
  if (batch_api_) batch_api_->Stop();    // lines in flight stay pending for the next start
  if (alarms_) alarms_->Stop();          // no actions from here on
  if (autoscaler_) autoscaler_->Stop();  // no resizing while the workers drain
  if (discovery_) discovery_->Stop();
  if (listening_) gateway_->Shutdown(drain_timeout);  // else its destructor's Stop()
  if (workers_) workers_->Stop();        // after the drain: the workers finish what the router sent
  if (embedder_) embedder_->Stop();
}

}  // namespace surge
