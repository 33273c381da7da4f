#include "server/openai_server.h"

#include <exception>
#include <functional>
#include <utility>

#include "base/logging.h"
#include "base/phase_profile.h"
#include "obs/dashboard/dashboard.h"
#include "obs/alarm_webhook/webhook_action.h"
#include "obs/otlp_http/otlp_http_sender.h"
#include "server/api_key_auth.h"
#include "server/in_flight_request.h"
#include "server/kv_event_stream.h"
#include "server/request_trace.h"
#include "server/routes.h"

namespace surge {
namespace {

using WorkerHandler = std::function<void(ServerContext&, const net::HttpRequest&, Writer, SteadyClock::time_point)>;

// Every API handler runs on a worker: the io thread only stamps the arrival time and
// posts. A bug that throws answers 500 for that one request; the server keeps serving.
// `traced`: with tracing on, the request gets a server span (server/request_trace.h),
// current while the handler runs.
net::Handler OnWorker(ServerContext& context, std::string endpoint, WorkerHandler handler, bool traced = false) {
  return [&context, endpoint = std::move(endpoint), handler = std::move(handler), traced](net::HttpRequest request,
                                                                                          Writer writer) {
    const SteadyClock::time_point arrival = SteadyClock::now();
    // By value: the task outlives this call, and net may call a copy of this handler.
    auto task = [&context, endpoint, handler, request = std::move(request), writer, arrival, traced] {
      const obs::Tracer* tracer = traced ? context.tracer.get() : nullptr;
      ScopedRequestTrace trace(RequestTrace::Start(tracer, request, endpoint, arrival, writer));
      PhaseSpan span(Phase::kHttpRequest);
      try {
        handler(context, request, writer, arrival);
      } catch (const std::exception& e) {
        LOG(ERROR) << endpoint << ": " << e.what();
        context.ReplyError(*writer, endpoint, {InternalError(std::string("internal error: ") + e.what()), "", ""});
      }
    };
    if (!context.runner.Post(std::move(task))) {
      context.ReplyError(*writer, endpoint, {UnavailableError("the server is shutting down"), "", ""});
    }
  };
}

// --otlp-endpoint given: the exporter's thread starts, and API requests get traced.
Status StartTracing(ServerContext& context) {
  const TracingOptions& tracing = context.options.tracing;
  if (tracing.otlp_endpoint.empty()) return OkStatus();
  if (!(tracing.sample_ratio >= 0 && tracing.sample_ratio <= 1)) {
    return InvalidArgumentError("the trace sample ratio must be in [0, 1]");
  }
  StatusOr<obs::OtlpSendFunction> send = obs::MakeOtlpHttpSender(tracing.otlp_endpoint);
  if (!send.ok()) return InvalidArgumentError("--otlp-endpoint: " + send.status().message());
  obs::SpanExporterOptions exporter;
  exporter.protocol = tracing.protocol;
  exporter.resource.service_name = tracing.service_name;
  context.span_exporter = std::make_unique<obs::SpanExporter>(exporter, *std::move(send));
  context.tracer = std::make_unique<obs::Tracer>(tracing.sample_ratio, context.span_exporter.get());
  return OkStatus();
}

// --alarm-rules: log and webhook act here; scale_up and restart_instance are the router's.
Status StartAlarms(ServerContext& context) {
  if (!context.options.alarm_rules) return OkStatus();
  obs::AlarmRunnerOptions options{.process_name = "surge serve",
                                  .scrape = [&context] { return ExposeMetrics(context); },
                                  .registry = &context.metrics.registry()};
  options.factories[obs::AlarmAction::Type::kWebhook] = obs::MakeWebhookAction;
  ASSIGN_OR_RETURN(context.alarms, obs::AlarmRunner::Start(*context.options.alarm_rules, std::move(options)));
  return OkStatus();
}

// --api-key: the route answers 401 without one of the keys (never on /health, /ping).
net::Handler WithApiKey(ServerContext& context, const std::string& path, net::Handler handler) {
  if (context.options.api_keys.empty() || IsOpenRoute(path, context.options.api_key_for_metrics)) return handler;
  return [&context, handler = std::move(handler)](net::HttpRequest request, Writer writer) {
    if (request.method != "OPTIONS" && !HasValidApiKey(context.options.api_keys, request)) {
      context.metrics.CountRequest(request.path, 401);
      return ReplyUnauthorized(*writer, request);
    }
    handler(std::move(request), std::move(writer));
  };
}

}  // namespace

void OpenAiServer::AddRoute(std::string method, std::string path, net::Handler handler, size_t max_body_bytes) {
  net::Handler guarded = WithApiKey(*context_, path, std::move(handler));
  http_->Route(std::move(method), std::move(path), std::move(guarded), max_body_bytes);
}

StatusOr<std::unique_ptr<OpenAiServer>> OpenAiServer::Create(EngineClient& engine, const Tokenizer& tokenizer,
                                                             ServerOptions options) {
  if (options.served_model_name.empty()) return InvalidArgumentError("served_model_name must not be empty");
  if (options.max_body_bytes == 0) return InvalidArgumentError("max_body_bytes must be > 0");
  const std::string& chat_template = options.chat_template.empty() ? tokenizer.chat_template() : options.chat_template;
  ASSIGN_OR_RETURN(PromptBuilder prompts, PromptBuilder::Create(tokenizer, chat_template, options.max_model_len));
  auto context = std::make_unique<ServerContext>(engine, std::move(prompts), std::move(options));
  if (context->options.vllm_metrics) context->metrics.EnableVllmCompat(context->options.served_model_name);
  RETURN_IF_ERROR(StartTracing(*context));
  RETURN_IF_ERROR(StartAlarms(*context));
  return std::unique_ptr<OpenAiServer>(new OpenAiServer(std::move(context)));
}

OpenAiServer::OpenAiServer(std::unique_ptr<ServerContext> context) : context_(std::move(context)) {
  net::HttpServerOptions http;
  http.host = context_->options.host;
  http.port = context_->options.port;
  http.max_body_bytes = context_->options.max_body_bytes;
  http.cors = context_->options.cors;
  http_ = std::make_unique<net::HttpServer>(http);
  context_->http_server = http_.get();
  AddRoutes();
}

OpenAiServer::~OpenAiServer() { Shutdown(std::chrono::milliseconds(0)); }

namespace {

// A sentence encoder generates nothing: its generation routes answer 400 saying so.
WorkerHandler RefuseGeneration(std::string endpoint) {
  return [endpoint](ServerContext& context, const net::HttpRequest&, Writer writer, SteadyClock::time_point) {
    context.ReplyError(*writer, endpoint,
                       api::InvalidParam("model", "model '" + context.options.served_model_name +
                                                      "' is a sentence encoder: it serves /v1/embeddings only, not " +
                                                      endpoint));
  };
}

}  // namespace

void OpenAiServer::AddRoutes() {
  ServerContext& context = *context_;
  auto generation = [&](const std::string& path, WorkerHandler handler) {
    AddRoute("POST", path, OnWorker(context, path, context.options.encoder ? RefuseGeneration(path) : handler, true));
  };
  generation("/v1/completions", HandleCompletions);
  generation("/v1/chat/completions", HandleChatCompletions);
  generation("/v1/responses", HandleResponses);
  AddRoute("POST", "/v1/embeddings", OnWorker(context, "/v1/embeddings", HandleEmbeddings, true));
  auto no_arrival = [](auto handler) {
    return [handler](ServerContext& c, const net::HttpRequest& r, Writer w, SteadyClock::time_point) {
      handler(c, r, std::move(w));
    };
  };
  AddRoute("GET", std::string(kResponsesPrefix) + "*",
           OnWorker(context, "/v1/responses", no_arrival(HandleGetResponse)));
  AddRoute("DELETE", std::string(kResponsesPrefix) + "*",
           OnWorker(context, "/v1/responses", no_arrival(HandleDeleteResponse)));
  AddRoute("POST", "/tokenize", OnWorker(context, "/tokenize", no_arrival(HandleTokenize)));
  AddRoute("POST", "/detokenize", OnWorker(context, "/detokenize", no_arrival(HandleDetokenize)));
  // Cheap answers stay on the io thread, so that health checks pass even when the
  // workers are busy.
  AddRoute("GET", "/health", [&context](net::HttpRequest, Writer writer) { HandleHealth(context, writer); });
  AddRoute("GET", "/v1/models", [&context](net::HttpRequest, Writer writer) { HandleModels(context, writer); });
  AddRoute("GET", std::string(kModelsPrefix) + "*",
           [&context](net::HttpRequest request, Writer writer) { HandleModel(context, request, writer); });
  AddRoute("GET", "/dashboard", [](net::HttpRequest, Writer writer) {
    writer->Send(200, {{"Content-Type", std::string(obs::kDashboardContentType)}}, std::string(obs::DashboardHtml()));
  });
  AddRoute("GET", "/kv_config", [&context](net::HttpRequest, Writer writer) { HandleKvConfig(context, *writer); });
  AddRoute("GET", "/kv_events", [&context](net::HttpRequest, Writer writer) { HandleKvEvents(context, writer); });
  AddRoute("GET", "/alarms", [&context](net::HttpRequest, Writer writer) { HandleAlarms(context, writer); });
  AddRoute("GET", "/metrics", OnWorker(context, "/metrics", [](ServerContext& c, const net::HttpRequest&, Writer w,
                                                              SteadyClock::time_point) { HandleMetrics(c, w); }));
  AddWorkerRoutes();
}

void OpenAiServer::AddWorkerRoutes() {
  ServerContext& context = *context_;
  AddRoute("GET", "/ping", [&context](net::HttpRequest, Writer writer) { HandlePing(context, writer); });
  AddRoute("POST", "/ping", [&context](net::HttpRequest, Writer writer) { HandlePing(context, writer); });
  AddRoute("GET", "/version", [&context](net::HttpRequest, Writer writer) { HandleVersion(context, writer); });
  AddRoute("GET", "/get_load", [&context](net::HttpRequest, Writer writer) { HandleGetLoad(context, writer); });
  for (const char* path : {"/server_info", "/get_server_info"}) {
    AddRoute("GET", path, [&context](net::HttpRequest, Writer writer) { HandleServerInfo(context, writer); });
  }
  for (const char* path : {"/model_info", "/get_model_info"}) {
    AddRoute("GET", path, [&context](net::HttpRequest, Writer writer) { HandleModelInfo(context, writer); });
  }
}

Status OpenAiServer::Start() { return http_->Start(); }

obs::Registry& OpenAiServer::metrics_registry() { return context_->metrics.registry(); }

void OpenAiServer::Shutdown(std::chrono::milliseconds drain_timeout) {
  if (shut_down_) return;
  shut_down_ = true;
  if (context_->alarms) context_->alarms->Stop();  // no actions while the server drains
  context_->draining = true;
  http_->Drain();
  context_->kv_event_streams.EndAll();  // they never end by themselves
  if (!context_->WaitUntilIdle(drain_timeout)) {
    const auto remaining = context_->InFlight();
    LOG(WARNING) << "drain timeout: cancelling " << remaining.size() << " generation(s)";
    for (const auto& generation : remaining) generation->Cancel();
    // Cancelled requests end at the engine's next step; a stopped engine fails them.
    if (!context_->WaitUntilIdle(std::chrono::seconds(10))) {
      LOG(ERROR) << "generations did not end after cancel";
    }
  }
  http_->WaitUntilIdle(std::chrono::seconds(5));  // let the last bytes reach the clients
  http_->Stop();
  context_->compile_runner.Stop();  // before the workers: it posts its answers to them
  context_->runner.Stop();
  if (context_->span_exporter) context_->span_exporter->Shutdown();  // sends what is left
}

}  // namespace surge
