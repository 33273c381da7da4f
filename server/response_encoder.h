// ResponseEncoder: how one generation's output is written for its protocol -- legacy
// completions, chat completions, or the Responses API -- streamed as SSE or whole.
// Generation splits the engine's deltas (reasoning, tool calls) and hands them here.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/response_common.h"
#include "base/status.h"

namespace surge {

class ResponseEncoder {
 public:
  virtual ~ResponseEncoder() = default;
  // SSE right after the stream's 200 head.
  virtual std::string StreamStart(int32_t num_choices) = 0;
  // SSE for one choice's delta; "" when it carries nothing to send.
  virtual std::string StreamDelta(const api::ChoiceOutput& delta) = 0;
  // SSE that ends the stream: the failure in band, or the usage; then the terminator.
  // `finish_reason`: the (only or last) choice's.
  virtual std::string StreamEnd(const api::Usage& usage, const std::optional<std::string>& finish_reason,
                                const Status& error) = 0;
  // The whole (non-streamed) body.
  virtual std::string Whole(const std::vector<api::ChoiceOutput>& choices, const api::Usage& usage) = 0;
};

std::unique_ptr<ResponseEncoder> MakeCompletionEncoder(api::ResponseMeta meta, bool include_usage);
std::unique_ptr<ResponseEncoder> MakeChatEncoder(api::ResponseMeta meta, bool include_usage);

// The Responses API (one choice). `on_finished` gets the final response object once the
// output is complete (the server stores it); it is not called for failed responses.
std::unique_ptr<ResponseEncoder> MakeResponsesEncoder(api::ResponseMeta meta, api::Json echo,
                                                      std::function<void(const api::Json&)> on_finished);

}  // namespace surge
