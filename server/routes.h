// The OpenAI server's route handlers. Each runs on a worker thread of the context's
// TaskRunner (the io thread only posts it) and answers through the writer.
#pragma once

#include <memory>
#include <string_view>

#include "api/chat_request.h"
#include "net/http_types.h"
#include "net/response_writer.h"
#include "server/generation.h"
#include "server/server_context.h"

namespace surge {

using Writer = std::shared_ptr<net::ResponseWriter>;

// POST /v1/completions and /v1/chat/completions (generate_routes.cc).
void HandleCompletions(ServerContext& context, const net::HttpRequest& request, Writer writer,
                       SteadyClock::time_point arrival);
void HandleChatCompletions(ServerContext& context, const net::HttpRequest& request, Writer writer,
                           SteadyClock::time_point arrival);

// The chat pipeline behind /v1/chat/completions, for the routes that are chat underneath
// (the Responses API): the route's name (metrics, errors), the field errors about the
// prompt name, and its encoder (null: chat completions').
struct ChatRoute {
  std::string_view endpoint;
  std::string_view prompt_param;
  std::shared_ptr<ResponseEncoder> encoder;
};
void RunChatRequest(ServerContext& context, const net::HttpRequest& http, api::ChatCompletionRequest request,
                    const ChatRoute& route, Writer writer, SteadyClock::time_point arrival);

// POST /v1/responses, GET and DELETE /v1/responses/{id} (responses_routes.cc).
void HandleResponses(ServerContext& context, const net::HttpRequest& request, Writer writer,
                     SteadyClock::time_point arrival);
inline constexpr char kResponsesPrefix[] = "/v1/responses/";
void HandleGetResponse(ServerContext& context, const net::HttpRequest& request, Writer writer);
void HandleDeleteResponse(ServerContext& context, const net::HttpRequest& request, Writer writer);
// POST /v1/embeddings (embedding_routes.cc).
void HandleEmbeddings(ServerContext& context, const net::HttpRequest& request, Writer writer,
                      SteadyClock::time_point arrival);

// POST /tokenize and /detokenize (tokenize_routes.cc).
void HandleTokenize(ServerContext& context, const net::HttpRequest& request, Writer writer);
void HandleDetokenize(ServerContext& context, const net::HttpRequest& request, Writer writer);

// GET /v1/models, /health and /metrics (admin_routes.cc).
void HandleModels(ServerContext& context, Writer writer);
inline constexpr char kModelsPrefix[] = "/v1/models/";
void HandleModel(ServerContext& context, const net::HttpRequest& http, Writer writer);
void HandleHealth(ServerContext& context, Writer writer);
void HandleMetrics(ServerContext& context, Writer writer);
// The text GET /metrics answers (engine gauges refreshed): what the alarm rules read.
std::string ExposeMetrics(ServerContext& context);
// GET /alarms: the alarm rules and their alerts (404 without --alarm-rules).
void HandleAlarms(ServerContext& context, Writer writer);

// vLLM's /ping and /version; what sgl-router, vllm-router and the llm-d endpoint picker ask
// of a worker: /get_load, /server_info and /model_info (worker_routes.cc).
void HandlePing(ServerContext& context, Writer writer);
void HandleVersion(ServerContext& context, Writer writer);
void HandleGetLoad(ServerContext& context, Writer writer);
void HandleServerInfo(ServerContext& context, Writer writer);
void HandleModelInfo(ServerContext& context, Writer writer);

// 404 model_not_found unless `model` is empty or the served model's name.
std::optional<api::ApiError> CheckModel(const ServerContext& context, const std::string& model);

}  // namespace surge
