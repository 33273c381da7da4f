#include "queue/queue_message.h"

#include "base/json_access.h"
#include "batch/batch_input.h"

namespace surge::queue {
namespace {

using json::Json;

// An engine answer nesting deeper than this is passed on as text: nothing recursive (the
// reply's dump) ever walks it.
constexpr int kMaxAnswerDepth = 128;

}  // namespace

StatusOr<QueueRequest> ValidateMessage(const QueueMessage& m, std::string_view default_endpoint,
                                       const MessageLimits& limits) {
  if (!m.header_error.empty()) return InvalidArgumentError(m.header_error);
  if (m.reply_to.empty()) return InvalidArgumentError("the message has no reply_to: nowhere to send the answer");
  if (m.correlation_id.empty()) return InvalidArgumentError("the message has no correlation_id");
  const std::string url = m.endpoint.empty() ? std::string(default_endpoint) : m.endpoint;
  if (!batch::IsBatchEndpoint(url)) {
    return InvalidArgumentError("endpoint '" + url + "' is not one of /v1/chat/completions, /v1/completions, /v1/embeddings");
  }
  ASSIGN_OR_RETURN(const Json body, json::Parse(m.body, "the body", limits.max_json_depth, limits.max_body_bytes));
  if (!body.is_object()) return InvalidArgumentError("the body must be a JSON object (an OpenAI request)");
  bool stream = false;
  json::ObjectReader reader(body, "the body");
  RETURN_IF_ERROR(reader.Bool("stream", &stream).status());
  if (stream) return InvalidArgumentError("stream is not supported on the queue: each answer is published whole");
  return QueueRequest{m.message_id.empty() ? m.correlation_id : m.message_id, url, json::Dump(body)};
}

std::string ReplyBody(int status_code, std::string_view body, std::string_view transport_error) {
  if (status_code == 0) {
    return json::Dump(Json{{"status_code", nullptr}, {"error", {{"code", "no_response"}, {"message", transport_error}}}});
  }
  // Not JSON, or too deep to walk: the text itself (invalid UTF-8 in it becomes U+FFFD).
  StatusOr<Json> parsed = json::Parse(body, "the answer", kMaxAnswerDepth, body.size());
  Json value = parsed.ok() ? std::move(parsed).value() : Json(std::string(body));
  return json::Dump(Json{{"status_code", status_code}, {"body", std::move(value)}});
}

}  // namespace surge::queue
