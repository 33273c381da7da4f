// The proxy routes' entry: what every proxied request borrows from the Gateway
// (ProxyContext) and ProxyRequest, which runs the request through the stages of
// router/pipeline/ (auth and limits, response cache, pool choice, tier admission, policy,
// forward: streamed back as it arrives, or whole so that a failure before the client saw a
// byte can still be retried elsewhere).
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

// Forwards `request` (any method and path; the target is sent as is) through the pipeline.
// Returns at once; the answer goes through `writer`.
void ProxyRequest(ProxyContext& context, net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer);

// The HTTP status a failed attempt's Status maps to: 504 for timeouts, 502 otherwise.
int GatewayStatusFor(const Status& status);

}  // namespace surge::router
