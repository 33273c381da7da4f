// POST /v1/responses: the Responses API over the chat pipeline (api/responses_request.h
// turns the request into a chat completion, api/responses_response.h writes the answer).
// A stored response (store: true, the default) can be fetched, deleted, and continued by
// previous_response_id.
#include <utility>

#include "api/responses_request.h"
#include "net/url.h"
#include "server/routes.h"

namespace surge {
namespace {

constexpr char kResponses[] = "/v1/responses";

api::ApiError ResponseNotFound(const std::string& id, std::string_view param) {
  return {NotFoundError("Response with id '" + id + "' not found."), std::string(param), ""};
}

std::string IdFromPath(const net::HttpRequest& http) {
  return net::PercentDecode(std::string_view(http.path).substr(std::string_view(kResponsesPrefix).size()));
}

}  // namespace

void HandleResponses(ServerContext& context, const net::HttpRequest& http, Writer writer,
                     SteadyClock::time_point arrival) {
  const api::RequestLimits& limits = context.options.request_limits;
  api::ApiResult<api::ResponsesRequest> parsed = api::ParseResponsesRequest(http.body, limits);
  if (!parsed.ok()) return context.ReplyError(*writer, kResponses, parsed.error());
  auto request = std::make_shared<const api::ResponsesRequest>(std::move(parsed).value());
  api::Json history = api::Json::array();
  if (!request->previous_response_id.empty()) {
    std::optional<StoredResponse> previous = context.responses.Get(request->previous_response_id);
    if (!previous) {
      return context.ReplyError(*writer, kResponses, ResponseNotFound(request->previous_response_id, "previous_response_id"));
    }
    history = std::move(previous->conversation);
  }
  api::ApiResult<api::ChatCompletionRequest> chat = api::ToChatRequest(*request, history, limits);
  if (!chat.ok()) return context.ReplyError(*writer, kResponses, chat.error());
  // Compile errors name the field as the client wrote it.
  if (chat->params.constraint.param == "response_format") chat->params.constraint.param = "text.format";
  api::ResponseMeta meta = {api::NewResponseId("resp_"), api::UnixSeconds(), context.options.served_model_name};
  std::function<void(const api::Json&)> on_finished;
  if (request->store) {
    on_finished = [&context, request, history = std::move(history)](const api::Json& response) {
      context.responses.Put(response["id"].get<std::string>(),
                            {response, api::ConversationAfter(history, *request, response["output"])});
    };
  }
  auto encoder = MakeResponsesEncoder(std::move(meta), request->echo, std::move(on_finished));
  RunChatRequest(context, http, std::move(chat).value(), {kResponses, "input", std::move(encoder)}, std::move(writer),
                 arrival);
}

void HandleGetResponse(ServerContext& context, const net::HttpRequest& http, Writer writer) {
  const std::string id = IdFromPath(http);
  std::optional<StoredResponse> stored = context.responses.Get(id);
  if (!stored) return context.ReplyError(*writer, kResponses, ResponseNotFound(id, "response_id"));
  context.Reply(*writer, kResponses, 200, api::Dump(stored->response));
}

void HandleDeleteResponse(ServerContext& context, const net::HttpRequest& http, Writer writer) {
  const std::string id = IdFromPath(http);
  if (!context.responses.Delete(id)) return context.ReplyError(*writer, kResponses, ResponseNotFound(id, "response_id"));
  context.Reply(*writer, kResponses, 200, api::Dump(api::Json{{"id", id}, {"object", "response"}, {"deleted", true}}));
}

}  // namespace surge
