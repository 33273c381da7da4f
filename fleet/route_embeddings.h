// `surge route --embeddings-spawn DIR`: the semantic cache's encoder as a local `surge serve
// DIR` worker beside the generation workers, so that no other embeddings server is needed.
#pragma once

#include <memory>

#include "base/status.h"
#include "router/route_config.h"
#include "router/workers/worker_supervisor.h"

namespace surge {

// When config.cache.semantic.embeddings_spawn names a model: starts one worker serving it
// (pool "embeddings", one model thread, never routed to), waits for its /health, and points
// cache.semantic.embeddings_url at it (embeddings_spawn is then cleared: the config holds a
// URL like any other). Null when nothing is to be spawned. A worker that crashes is
// restarted by its supervisor, on a new port: until the router restarts, lookups then miss
// (surge_router_cache_errors_total counts them) and requests go on uncached.
StatusOr<std::unique_ptr<router::WorkerSupervisor>> StartEmbeddingsWorker(router::RouteConfig* config);

}  // namespace surge
