// Gateway: `surge route` as an object -- it owns the configuration, the backend set, the
// HTTP client to the engines, the health monitor, the metrics and the listening server,
// and lets other parts (the local worker supervisor, a later autoscaler) add, remove and
// drain backends while it runs.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "net/http_server.h"
#include "router/route_config.h"

namespace surge::obs {
class Registry;
class SpanExporter;
class Tracer;
}  // namespace surge::obs

namespace surge::net {
class HttpClient;
class HttpServer;
class ResponseWriter;
struct HttpRequest;
}  // namespace surge::net

namespace surge::router {

class BackendMonitor;
class BackendSet;
class DelayQueue;
class RequestGate;
class ResponseCache;
class RouterMetrics;
struct ProxyContext;

class Gateway {
 public:
  // Checks the config and builds everything; nothing listens yet.
  static StatusOr<std::unique_ptr<Gateway>> Create(RouteConfig config);
  ~Gateway();  // Stop()

  // Checks every backend once, starts the monitor and listens on config.host:port.
  Status Start();
  uint16_t port() const;
  std::string url() const;  // "http://HOST:PORT"

  // Thread-safe, at any time (also before Start).
  Status AddBackend(std::string_view pool, std::string_view url, double weight = 1.0);
  // In-flight requests on it finish; new ones go elsewhere.
  Status RemoveBackend(std::string_view url);
  Status SetDraining(std::string_view url, bool draining);
  // A tier whose home pool this is borrows capacity (the autoscaler's scale-up input).
  bool NeedsCapacity(const std::string& pool);

  // Graceful stop: refuse new connections, let in-flight requests finish up to `timeout`,
  // then close everything. Returns whether it was idle in time.
  bool Shutdown(std::chrono::milliseconds timeout);
  void Stop();

  // Before Start: another part's route on the gateway's server (the Batch API). An exact
  // path or a longer prefix wins over the proxy's "/v1/*". `max_body_bytes` 0: the config's.
  void AddRoute(std::string method, std::string path, net::Handler handler, size_t max_body_bytes = 0);

  // The /metrics text (per-backend gauges refreshed first): what the alarm rules read.
  std::string ExposeMetrics();
  // GET /alarms answers `source()` (JSON text) once set; 404 before (no --alarm-rules).
  void SetAlarmsSource(std::function<std::string()> source);

  const RouteConfig& config() const { return config_; }
  // For other parts' families (the autoscaler's, the alarm rules'), rendered at GET /metrics.
  obs::Registry& metrics_registry();
  BackendSet& backends() { return *backends_; }

 private:
  explicit Gateway(RouteConfig config);
  void RegisterRoutes();
  Status StartTracing();  // the exporter and tracer, when config.tracing names an endpoint
  // DELETE /cache[?scope=TENANT]: drops one tenant's entries, or all (admin keys only).
  void FlushCache(const net::HttpRequest& request, std::shared_ptr<net::ResponseWriter> writer);

  const RouteConfig config_;
  // Declaration order is destruction order reversed: the server goes first, then the
  // retries still waiting (they see `stopping` and answer 503), then what they borrow.
  std::unique_ptr<BackendSet> backends_;
  std::unique_ptr<RouterMetrics> metrics_;
  std::unique_ptr<RequestGate> gate_;
  std::unique_ptr<obs::SpanExporter> exporter_;  // tracing on only
  std::unique_ptr<obs::Tracer> tracer_;
  std::unique_ptr<BackendMonitor> monitor_;
  std::unique_ptr<net::HttpClient> monitor_client_;  // on its own io thread
  std::unique_ptr<net::HttpClient> client_;          // the proxy's: on server_'s io thread
  std::unique_ptr<ProxyContext> context_;
  std::unique_ptr<DelayQueue> delays_;
  // Its Redis workers may still be answering lookups: it goes before what they call into.
  std::unique_ptr<ResponseCache> cache_;  // null: off
  std::unique_ptr<net::HttpServer> server_;
  struct AlarmsSource;
  std::shared_ptr<AlarmsSource> alarms_;  // shared with the /alarms route
  bool stopped_ = false;
};

}  // namespace surge::router
