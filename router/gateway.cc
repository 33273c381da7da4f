#include "router/gateway.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <mutex>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/sse.h"
#include "obs/dashboard/dashboard.h"
#include "obs/metrics.h"
#include "router/backend_monitor.h"
#include "router/backend_set.h"
#include "router/cache/response_cache.h"
#include "router/delay_queue.h"
#include "router/models_route.h"
#include "obs/otlp_http/otlp_http_sender.h"
#include "obs/span_exporter.h"
#include "obs/tracer.h"
#include "router/proxy.h"
#include "router/request_gate.h"
#include "router/router_metrics.h"

namespace surge::router {

struct Gateway::AlarmsSource {
  std::mutex mu;
  std::function<std::string()> source;  // guarded by mu
};

StatusOr<std::unique_ptr<Gateway>> Gateway::Create(RouteConfig config) {
  config.pools.try_emplace(kDefaultPool);
  Status valid = ValidateRouteConfig(config);
  if (!valid.ok()) return valid;
  std::unique_ptr<Gateway> gateway(new Gateway(std::move(config)));
  const RouteConfig& c = gateway->config_;
  StatusOr<std::unique_ptr<BackendSet>> backends = BackendSet::Create(c);
  if (!backends.ok()) return backends.status();
  gateway->backends_ = std::move(backends).value();
  gateway->metrics_ = std::make_unique<RouterMetrics>();
  for (const auto& [pool, unused] : c.pools) gateway->metrics_->AddPool(pool);
  StatusOr<ApiKeyStore> keys = ApiKeyStore::Load(c.api_keys_file, std::getenv(kApiKeysEnv));
  if (!keys.ok()) return keys.status();
  for (const ApiKeyInfo& key : keys->keys()) {
    if (key.semantic_cache && !c.cache.semantic.on()) {
      return InvalidArgumentError("an API key (tenant '" + key.tenant +
                                  "') has \"semantic_cache\": true, but the semantic cache is off "
                                  "(--cache and --embeddings-url)");
    }
  }
  StatusOr<std::unique_ptr<RequestGate>> gate =
      RequestGate::Create(c, std::move(keys).value(), &gateway->metrics_->registry());
  if (!gate.ok()) return gate.status();
  gateway->gate_ = std::move(gate).value();
  if (Status status = gateway->StartTracing(); !status.ok()) return status;
  net::HttpServerOptions server_options;
  server_options.host = c.host;
  server_options.port = static_cast<uint16_t>(c.port);
  server_options.max_body_bytes = static_cast<size_t>(c.max_body_bytes);
  gateway->server_ = std::make_unique<net::HttpServer>(server_options);
  const net::HttpClientOptions client_options{.connect_timeout_ms = c.timeouts.connect_ms};
  // The proxy's client runs on the server's io thread: a request's hand-off to its backend
  // and its answer's way back to the client cross no thread. The monitor's checks run
  // before the server starts, on a client of their own.
  gateway->client_ = std::make_unique<net::HttpClient>(client_options, *gateway->server_);
  gateway->monitor_client_ = std::make_unique<net::HttpClient>(client_options);
  BackendSet* set = gateway->backends_.get();
  gateway->monitor_ =
      std::make_unique<BackendMonitor>(c.health, *gateway->monitor_client_, [set] { return set->Snapshot(); });
  gateway->delays_ = std::make_unique<DelayQueue>();
  if (c.cache.on()) {
    StatusOr<std::unique_ptr<ResponseCache>> cache =
        ResponseCache::Create(c.cache, &gateway->metrics_->registry(), SteadyNowMs);
    if (!cache.ok()) return cache.status();
    gateway->cache_ = std::move(cache).value();
  }
  gateway->context_.reset(new ProxyContext{c, *gateway->backends_, *gateway->client_, *gateway->metrics_,
                                           *gateway->delays_, *gateway->gate_, gateway->tracer_.get(),
                                           gateway->cache_.get()});
  gateway->RegisterRoutes();
  return gateway;
}

Gateway::Gateway(RouteConfig config) : config_(std::move(config)) {}

Status Gateway::StartTracing() {
  const RouteConfig::Tracing& tracing = config_.tracing;
  if (tracing.otlp_endpoint.empty()) return OkStatus();
  StatusOr<obs::OtlpProtocol> protocol = obs::ParseOtlpProtocol(tracing.protocol);
  if (!protocol.ok()) return protocol.status().WithContext("tracing.protocol");
  StatusOr<obs::OtlpSendFunction> send = obs::MakeOtlpHttpSender(tracing.otlp_endpoint);
  if (!send.ok()) return send.status().WithContext("tracing.otlp_endpoint");
  obs::SpanExporterOptions options;
  options.protocol = *protocol;
  options.resource.service_name = tracing.service_name;
  exporter_ = std::make_unique<obs::SpanExporter>(options, std::move(send).value());
  tracer_ = std::make_unique<obs::Tracer>(tracing.sample_ratio, exporter_.get());
  return OkStatus();
}

Gateway::~Gateway() { Stop(); }

void Gateway::RegisterRoutes() {
  ProxyContext* context = context_.get();
  auto proxy = [context](net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) {
    ProxyRequest(*context, std::move(request), std::move(writer));
  };
  for (const char* path : {"/v1/*", "/tokenize", "/detokenize"}) server_->Route("POST", path, proxy);
  server_->Route("GET", "/v1/*", proxy);
  server_->Route("GET", "/v1/models", [context](net::HttpRequest, std::shared_ptr<net::ResponseWriter> writer) {
    ServeModels(*context, std::move(writer));
  });
  BackendSet* set = backends_.get();
  server_->Route("GET", "/health", [set](net::HttpRequest, std::shared_ptr<net::ResponseWriter> writer) {
    const int num_routable = set->NumRoutable(SteadyNowMs());
    nlohmann::json body{{"status", num_routable > 0 ? "ok" : "no routable backend"},
                        {"num_routable_backends", num_routable}};
    writer->SendJson(num_routable > 0 ? 200 : 503, body.dump());
  });
  server_->Route("GET", "/metrics", [this](net::HttpRequest, std::shared_ptr<net::ResponseWriter> writer) {
    writer->Send(200, {{"content-type", std::string(obs::kPrometheusContentType)}}, ExposeMetrics());
  });
  server_->Route("GET", "/dashboard", [](net::HttpRequest, std::shared_ptr<net::ResponseWriter> writer) {
    writer->Send(200, {{"content-type", std::string(obs::kDashboardContentType)}}, std::string(obs::DashboardHtml()));
  });
  server_->Route("DELETE", "/cache", [this](net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) {
    FlushCache(request, std::move(writer));
  });
  alarms_ = std::make_shared<AlarmsSource>();
  server_->Route("GET", "/alarms", [alarms = alarms_](net::HttpRequest, std::shared_ptr<net::ResponseWriter> writer) {
    std::function<std::string()> source;
    {
      std::lock_guard<std::mutex> lock(alarms->mu);
      source = alarms->source;
    }
    if (!source) {
      return writer->SendJson(404, R"json({"error": "no alarm rules (start surge route with --alarm-rules FILE)"})json");
    }
    writer->SendJson(200, source());
  });
}

void Gateway::FlushCache(const net::HttpRequest& request, std::shared_ptr<net::ResponseWriter> writer) {
  if (auto refusal = gate_->CheckAdmin(request)) return writer->Send(refusal->status, refusal->headers, refusal->body);
  if (cache_ == nullptr) return writer->SendJson(404, net::ErrorJson(404, "no response cache (start surge route with --cache)"));
  std::optional<std::string> scope;
  if (!request.query.empty()) {
    if (request.query.rfind("scope=", 0) != 0 || request.query.size() == 6 || request.query.find('&') != std::string::npos) {
      return writer->SendJson(400, net::ErrorJson(400, "DELETE /cache takes one query parameter, scope=TENANT"));
    }
    scope = request.query.substr(6);
  }
  cache_->Flush(scope, [writer, scope](StatusOr<int64_t> flushed) {
    if (!flushed.ok()) return writer->SendJson(503, net::ErrorJson(503, flushed.status().message()));
    writer->SendJson(200, nlohmann::json{{"flushed", *flushed}, {"scope", scope ? nlohmann::json(*scope) : nlohmann::json()}}.dump());
  });
}

std::string Gateway::ExposeMetrics() {
  std::vector<std::shared_ptr<Backend>> backends = backends_->Snapshot();
  gate_->RefreshMetrics();
  if (cache_) cache_->RefreshMetrics();
  metrics_->SetActiveConnections(server_->num_open_connections());
  return metrics_->Expose(backends, SteadyNowMs());
}

void Gateway::SetAlarmsSource(std::function<std::string()> source) {
  std::lock_guard<std::mutex> lock(alarms_->mu);
  alarms_->source = std::move(source);
}

Status Gateway::Start() {
  monitor_->CheckNow();
  monitor_->Start();
  return server_->Start();
}

uint16_t Gateway::port() const { return server_->port(); }

std::string Gateway::url() const {
  const bool ipv6 = config_.host.find(':') != std::string::npos;
  return "http://" + (ipv6 ? "[" + config_.host + "]" : config_.host) + ":" + std::to_string(port());
}

void Gateway::AddRoute(std::string method, std::string path, net::Handler handler, size_t max_body_bytes) {
  server_->Route(std::move(method), std::move(path), std::move(handler), max_body_bytes);
}

obs::Registry& Gateway::metrics_registry() { return metrics_->registry(); }

Status Gateway::AddBackend(std::string_view pool, std::string_view url, double weight) {
  return backends_->AddBackend(pool, url, weight);
}

Status Gateway::RemoveBackend(std::string_view url) { return backends_->RemoveBackend(url); }

Status Gateway::SetDraining(std::string_view url, bool draining) { return backends_->SetDraining(url, draining); }

bool Gateway::NeedsCapacity(const std::string& pool) { return gate_->NeedsCapacity(pool); }

bool Gateway::Shutdown(std::chrono::milliseconds timeout) {
  server_->Drain();
  const bool idle = server_->WaitUntilIdle(timeout);
  Stop();
  return idle;
}

void Gateway::Stop() {
  if (stopped_ || context_ == nullptr) return;  // nothing was started (Create failed midway)
  stopped_ = true;
  // Order matters: no new attempts or retries, then no clients (the server's Stop also ends
  // the proxy client's requests, on its loop: their callbacks see `stopping` and retry
  // nothing), no checks, and last the HTTP clients.
  context_->stopping.store(true);
  server_->Stop();
  monitor_->Stop();
  client_.reset();
  monitor_client_.reset();
  if (exporter_) exporter_->Shutdown();  // what the last requests traced still goes out
}

}  // namespace surge::router
