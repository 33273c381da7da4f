#include "queue/queue_message.h"

#include <nlohmann/json.hpp>

#include "base/json_depth.h"
#include "batch/batch_input.h"

namespace surge::queue {

using Json = nlohmann::ordered_json;

StatusOr<QueueRequest> ValidateMessage(const QueueMessage& m, std::string_view default_endpoint,
                                       const MessageLimits& limits) {
  if (!m.header_error.empty()) return InvalidArgumentError(m.header_error);
  if (m.reply_to.empty()) return InvalidArgumentError("the message has no reply_to: nowhere to send the answer");
  if (m.correlation_id.empty()) return InvalidArgumentError("the message has no correlation_id");
  const std::string url = m.endpoint.empty() ? std::string(default_endpoint) : m.endpoint;
  if (!batch::IsBatchEndpoint(url)) {
    return InvalidArgumentError("endpoint '" + url + "' is not one of /v1/chat/completions, /v1/completions, /v1/embeddings");
  }
  if (m.body.size() > limits.max_body_bytes || !JsonDepthWithin(m.body, limits.max_json_depth)) {
    return InvalidArgumentError("the body is too large or nests too deep");
  }
  const Json body = Json::parse(m.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return InvalidArgumentError("the body is not valid JSON");
  if (!body.is_object()) return InvalidArgumentError("the body must be a JSON object (an OpenAI request)");
  if (body.value("stream", false) == true) {
    return InvalidArgumentError("stream is not supported on the queue: each answer is published whole");
  }
  return QueueRequest{m.message_id.empty() ? m.correlation_id : m.message_id, url, body.dump()};
}

std::string ReplyBody(int status_code, std::string_view body, std::string_view transport_error) {
  if (status_code == 0) {
    return Json{{"status_code", nullptr}, {"error", {{"code", "no_response"}, {"message", transport_error}}}}.dump();
  }
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) parsed = std::string(body);
  return Json{{"status_code", status_code}, {"body", std::move(parsed)}}.dump();
}

}  // namespace surge::queue
