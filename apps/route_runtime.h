// RouteRuntime: everything `surge route` runs — the gateway, its spawned and embeddings workers,
// Kubernetes discovery, the autoscaler, alarms, the Batch API and the queue consumer — built
// from one RouteSetup; shared by the command and the in-process tests (which start it on port 0).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "autoscale/autoscaler.h"
#include "base/status.h"
#include "batch/batch_service.h"
#include "fleet/kubernetes/endpoint_slice_watcher.h"
#include "fleet/route_autoscaler.h"
#include "obs/alarms/alarm_runner.h"
#include "queue/queue_consumer.h"
#include "router/gateway.h"
#include "router/route_config.h"
#include "router/workers/worker_supervisor.h"

namespace surge {

// What `surge route`'s flags and files come to, checked (apps/route_flags.h builds it).
struct RouteSetup {
  router::RouteConfig config;
  std::optional<autoscale::AutoscaleConfig> autoscale;   // --autoscale POLICY_FILE
  std::optional<obs::AlarmConfig> alarms;                // --alarm-rules FILE
  std::optional<batch::BatchServiceOptions> batch;       // --data-dir; nullopt: its routes answer 404
  std::optional<queue::QueueOptions> queue;              // --queue
};

// Why Start failed, and the exit status that means: 2 for what the setup asks that cannot be
// (a policy name, a worker that will not start, a rule no action serves), 1 for what failed
// while starting (the listening port, the data dir).
struct RouteStartError {
  Status status;
  int exit_code = 2;
};

class RouteRuntime {
 public:
  // Starts the parts in order (embeddings worker, gateway, Batch API, listening, spawned
  // workers up, discovery, autoscaler, alarms, batch runner, queue consumer); on an error,
  // null with `error` set, and what had started is stopped.
  static std::unique_ptr<RouteRuntime> Start(RouteSetup setup, RouteStartError* error);
  ~RouteRuntime();  // Shutdown(0) unless it ran

  router::Gateway& gateway() { return *gateway_; }
  uint16_t port() const { return gateway_->port(); }
  const router::RouteConfig& config() const { return gateway_->config(); }

  // The consumer and the batch runner stop first (unacked messages return to the queue, lines
  // in flight stay pending), then alarms, autoscaler and discovery; the gateway drains for up
  // to `drain_timeout`; the workers stop last, finishing what the router sent. Idempotent.
  void Shutdown(std::chrono::milliseconds drain_timeout);

 private:
  RouteRuntime() = default;
  Status StartGateway(RouteSetup& setup, int* exit_code);
  Status StartFleet(RouteSetup& setup);
  void StartBatchWork(std::optional<queue::QueueOptions> queue);

  std::unique_ptr<router::WorkerSupervisor> embedder_;  // --embeddings-spawn
  std::unique_ptr<router::Gateway> gateway_;
  std::unique_ptr<batch::BatchService> batch_api_;      // --data-dir
  std::unique_ptr<router::WorkerSupervisor> workers_;   // --spawn / pools' spawn
  std::unique_ptr<k8s::EndpointSliceWatcher> discovery_;  // --kubernetes
  std::unique_ptr<RouteAutoscaler> autoscaler_;         // --autoscale
  std::shared_ptr<obs::AlarmRunner> alarms_;            // --alarm-rules
  std::unique_ptr<queue::QueueConsumer> consumer_;      // --queue
  bool listening_ = false;
  bool shut_down_ = false;
};

}  // namespace surge
