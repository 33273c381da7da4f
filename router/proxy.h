// The proxy path: one client request forwarded to a backend its pool's policy chose,
// streamed back as it arrives (SSE) or whole (everything else, so that a failure before
// the client saw a byte can still be retried elsewhere), with retries, jittered back-off,
// breaker and ejection bookkeeping, and the backend request cancelled the moment the
// client goes away.
#pragma once

#include <atomic>
#include <memory>

#include "net/http_client.h"
#include "net/http_types.h"
#include "net/response_writer.h"
#include "router/backend_set.h"
#include "router/cache/response_cache.h"
#include "router/delay_queue.h"
#include "obs/tracer.h"
#include "router/request_gate.h"
#include "router/route_config.h"
#include "router/router_metrics.h"

namespace surge::router {

// What every request borrows; owned by the Gateway and outliving every request.
struct ProxyContext {
  const RouteConfig& config;
  BackendSet& backends;
  net::HttpClient& client;
  RouterMetrics& metrics;
  DelayQueue& delays;
  RequestGate& gate;  // keys, limits, tiers
  const obs::Tracer* tracer = nullptr;  // null: tracing off
  ResponseCache* cache = nullptr;       // null: the response cache is off
  // Set when the gateway shuts down: no new attempt or retry starts.
  std::atomic<bool> stopping{false};
};

// Forwards `request` (any method and path; the target is sent as is). Returns at once;
// the answer goes through `writer`.
void ProxyRequest(ProxyContext& context, net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer);

// The HTTP status a failed attempt's Status maps to: 504 for timeouts, 502 otherwise.
int GatewayStatusFor(const Status& status);

}  // namespace surge::router
