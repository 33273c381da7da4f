// What one queue message must hold to run, checked before anything is sent: a body that is
// a JSON object (no "stream": true, the Batch API's rule), a reply_to and a correlation_id
// (the RPC pattern), and an endpoint (the `x-surge-endpoint` header, else the consumer's
// default) among the batch endpoints. A message that fails is poison: dead-lettered.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace surge::queue {

inline constexpr std::string_view kEndpointHeader = "x-surge-endpoint";

struct QueueMessage {
  std::string message_id{};      // "" when the publisher set none
  std::string correlation_id{};
  std::string reply_to{};
  std::string endpoint{};        // the x-surge-endpoint header, "" when absent
  std::string header_error{};    // a header of the wrong type ("" when none): poison
  std::string body{};
};

struct QueueRequest {
  std::string key{};       // the dedup key: message_id, else correlation_id
  std::string url{};       // "/v1/chat/completions"
  std::string body{};      // compact JSON
};

struct MessageLimits {
  size_t max_body_bytes = 4 << 20;
  int max_json_depth = 64;
};

// An InvalidArgument status says why the message is poison.
StatusOr<QueueRequest> ValidateMessage(const QueueMessage& message, std::string_view default_endpoint,
                                       const MessageLimits& limits = {});

// The reply's body: {"status_code": N, "body": <the server's JSON, or its text>} for an HTTP
// answer; {"status_code": null, "error": {"code": "no_response", "message": ...}} without one.
std::string ReplyBody(int status_code, std::string_view body, std::string_view transport_error);

}  // namespace surge::queue
