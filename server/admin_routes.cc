// GET /v1/models, /health and /metrics.
#include "api/response_common.h"
#include "server/routes.h"

namespace surge {

void HandleModels(ServerContext& context, Writer writer) {
  static const int64_t kCreated = api::UnixSeconds();  // when the server came up
  api::Json model = {{"id", context.options.served_model_name},
                     {"object", "model"},
                     {"created", kCreated},
                     {"owned_by", "surge"},
                     {"root", context.options.served_model_name},
                     {"parent", nullptr},
                     {"max_model_len", context.prompts.max_model_len()}};
  api::Json body = {{"object", "list"}, {"data", api::Json::array({std::move(model)})}};
  context.Reply(*writer, "/v1/models", 200, api::Dump(body));
}

// 200 only when the engine runs and the server is not shutting down, so that a load
// balancer stops sending traffic the moment a drain begins.
void HandleHealth(ServerContext& context, Writer writer) {
  const char* state = context.draining ? "draining" : context.engine.Stats().ready ? "ok" : "loading";
  const int http_status = std::string_view(state) == "ok" ? 200 : 503;
  context.Reply(*writer, "/health", http_status, api::Dump(api::Json{{"status", state}}));
}

void HandleMetrics(ServerContext& context, Writer writer) {
  std::string text = context.metrics.Expose(context.engine.Stats());
  context.metrics.CountRequest("/metrics", 200);
  writer->Send(200, {{"Content-Type", std::string(obs::kPrometheusContentType)}}, std::move(text));
}

}  // namespace surge
