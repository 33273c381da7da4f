#include "fleet/route_embeddings.h"

#include <cstdio>

namespace surge {

StatusOr<std::unique_ptr<router::WorkerSupervisor>> StartEmbeddingsWorker(router::RouteConfig* config) {
  router::SemanticCacheConfig& semantic = config->cache.semantic;
  if (semantic.embeddings_spawn.empty()) return std::unique_ptr<router::WorkerSupervisor>();
  router::SupervisorOptions options;
  options.health_timeout_ms = config->worker_health_timeout_ms;
  options.log_dir = config->worker_log_dir;
  const router::WorkerSpec spec{.pool = "embeddings", .num_workers = 1, .surge_binary = "/proc/self/exe",
                                .model_path = semantic.embeddings_spawn, .engine_args = {"--threads", "1"}};
  auto on_event = [](const router::WorkerEvent& event) {
    std::fprintf(stderr, "surge route: embeddings worker %s %s\n", event.url.c_str(),
                 event.kind == router::WorkerEvent::kUp ? "up" : "down");
  };
  ASSIGN_OR_RETURN(std::unique_ptr<router::WorkerSupervisor> supervisor,
                   router::WorkerSupervisor::Start({spec}, options, on_event));
  RETURN_IF_ERROR(supervisor->WaitUntilUp(config->worker_health_timeout_ms));
  const std::vector<router::WorkerInfo> workers = supervisor->workers();
  if (workers.empty() || workers[0].url.empty()) return InternalError("the embeddings worker is up without a URL");
  semantic.embeddings_url = workers[0].url + "/v1";
  semantic.embeddings_spawn.clear();
  return supervisor;
}

}  // namespace surge
