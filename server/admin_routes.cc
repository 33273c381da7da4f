// GET /v1/models, /v1/models/{id}, /health and /metrics.
#include "api/response_common.h"
#include "base/phase_profile.h"
#include "net/url.h"
#include "server/routes.h"

namespace surge {

namespace {

api::Json ModelObject(const ServerContext& context) {
  static const int64_t kCreated = api::UnixSeconds();  // when the server came up
  return {{"id", context.options.served_model_name},
          {"object", "model"},
          {"created", kCreated},
          {"owned_by", "surge"},
          {"root", context.options.served_model_name},
          {"parent", nullptr},
          {"max_model_len", context.prompts.max_model_len()}};
}

}  // namespace

void HandleModels(ServerContext& context, Writer writer) {
  api::Json body = {{"object", "list"}, {"data", api::Json::array({ModelObject(context)})}};
  context.Reply(*writer, "/v1/models", 200, api::Dump(body));
}

// GET /v1/models/{id}: ids may hold slashes ("deepseek-ai/DeepSeek-V3"), so the id is the
// whole rest of the path, percent-decoded as OpenAI's clients encode it.
void HandleModel(ServerContext& context, const net::HttpRequest& http, Writer writer) {
  const std::string id = net::PercentDecode(std::string_view(http.path).substr(std::string_view(kModelsPrefix).size()));
  if (id != context.options.served_model_name) {
    return context.ReplyError(
        *writer, "/v1/models", api::ApiError{NotFoundError("The model `" + id + "` does not exist."), "model", "model_not_found"});
  }
  context.Reply(*writer, "/v1/models", 200, api::Dump(ModelObject(context)));
}

// 200 only when the engine runs and the server is not shutting down, so that a load
// balancer stops sending traffic the moment a drain begins.
void HandleHealth(ServerContext& context, Writer writer) {
  const char* state = context.draining ? "draining" : context.engine.Stats().ready ? "ok" : "loading";
  const int http_status = std::string_view(state) == "ok" ? 200 : 503;
  context.Reply(*writer, "/health", http_status, api::Dump(api::Json{{"status", state}}));
}

std::string ExposeMetrics(ServerContext& context) {
  std::optional<obs::SpanExporterStats> traces;
  if (context.span_exporter) traces = context.span_exporter->stats();
  if (context.http_server != nullptr) context.metrics.SetActiveConnections(context.http_server->num_open_connections());
  return context.metrics.Expose(context.engine.Stats(), traces ? &*traces : nullptr) + PhaseProfilePrometheus();
}

void HandleMetrics(ServerContext& context, Writer writer) {
  std::string text = ExposeMetrics(context);
  context.metrics.CountRequest("/metrics", 200);
  writer->Send(200, {{"Content-Type", std::string(obs::kPrometheusContentType)}}, std::move(text));
}

void HandleAlarms(ServerContext& context, Writer writer) {
  if (!context.alarms) {
    return context.ReplyError(*writer, "/alarms",
                              api::ApiError{NotFoundError("no alarm rules (start surge serve with --alarm-rules FILE)"),
                                            "", "not_found"});
  }
  context.Reply(*writer, "/alarms", 200, context.alarms->ToJson().dump());
}

}  // namespace surge
