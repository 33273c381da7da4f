// libFuzzer target: the OpenAI request parsers of api/ (the bodies of /v1/completions,
// /v1/chat/completions, /v1/embeddings, /tokenize and /detokenize, generation parameters
// included). Byte 0 picks the parser -- '4' the embeddings one (added later: the other
// seeds keep their byte % 4) -- and the rest is the body. Any input may fail, none may crash,
// trip a CHECK or throw; an error must still make a valid error reply.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "api/embedding_request.h"
#include "api/error.h"
#include "api/tokenize_request.h"

namespace {

using surge::api::ApiResult;

// Touches what a route reads from a parsed request, and renders the error reply of a
// failed one (its message may quote the client's bytes).
template <typename T>
void Finish(const ApiResult<T>& result) {
  if (!result.ok()) {
    surge::api::ErrorReply reply = surge::api::MakeErrorReply(result.error());
    if (reply.body.empty()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] == '4') {
    auto request = surge::api::ParseEmbeddingRequest(body);
    Finish(request);
    if (request.ok() && request->inputs.empty()) __builtin_trap();  // never empty
    if (request.ok()) (void)surge::api::EmbeddingResponseJson("m", {{0.5f}}, request->base64, 1);
    return 0;
  }
  switch (data[0] % 4) {
    case 0: {
      auto request = surge::api::ParseCompletionRequest(body);
      Finish(request);
      if (request.ok() && request->prompts.empty()) __builtin_trap();  // never empty
      break;
    }
    case 1: {
      auto request = surge::api::ParseChatCompletionRequest(body);
      Finish(request);
      if (request.ok()) (void)request->input.messages.dump(-1, ' ', false,
                                                          nlohmann::json::error_handler_t::replace);
      break;
    }
    case 2: Finish(surge::api::ParseTokenizeRequest(body)); break;
    case 3: Finish(surge::api::ParseDetokenizeRequest(body)); break;
  }
  return 0;
}
