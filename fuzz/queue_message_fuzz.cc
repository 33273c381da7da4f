// libFuzzer target: what `surge route --queue` reads from outside (queue/queue_message.cc
// compiled in alone, without librabbitmq). Byte 0 picks:
//   0: ValidateMessage with `rest` as the message body (and byte 1's low bits as the
//      x-surge-endpoint header's choice): poison is INVALID_ARGUMENT, a request is compact
//      JSON of an object without stream: true;
//   1: ReplyBody with `rest` as the engine's answer (any bytes, any depth): valid JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/check.h"
#include "queue/queue_message.h"

namespace {

constexpr std::string_view kEndpoints[] = {"", "/v1/completions", "/v1/embeddings", "/v1/models"};

void CheckMessage(std::string_view body, uint8_t choice) {
  surge::queue::QueueMessage message{.message_id = "m", .correlation_id = "c", .reply_to = "r",
                                     .endpoint = std::string(kEndpoints[choice % 4]), .body = std::string(body)};
  surge::queue::MessageLimits limits;
  limits.max_body_bytes = 64 << 10;
  auto request = surge::queue::ValidateMessage(message, "/v1/chat/completions", limits);
  if (!request.ok()) {
    CHECK(request.status().code() == surge::StatusCode::kInvalidArgument) << request.status().ToString();
    return;
  }
  const nlohmann::json parsed = nlohmann::json::parse(request->body, nullptr, /*allow_exceptions=*/false);
  CHECK(parsed.is_object()) << request->body;
  CHECK(!parsed.contains("stream") || parsed["stream"] == false) << request->body;
  CHECK(request->key == "m");
}

void CheckReply(std::string_view answer, uint8_t choice) {
  const int status_code = choice % 3 == 0 ? 0 : choice % 3 == 1 ? 200 : 503;
  const std::string reply = surge::queue::ReplyBody(status_code, answer, answer);
  const nlohmann::json parsed = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  CHECK(parsed.is_object()) << reply;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  if (data[0] % 2 == 0) CheckMessage(rest, data[1]);
  else CheckReply(rest, data[1]);
  return 0;
}
