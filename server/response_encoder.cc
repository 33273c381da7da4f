#include "server/response_encoder.h"

#include <utility>

#include "api/chat_response.h"
#include "api/completion_response.h"
#include "api/error.h"
#include "api/responses_response.h"
#include "net/sse.h"

namespace surge {
namespace {

// Completions and chat completions: data-only chunks, then [DONE].
class ChunkEncoder final : public ResponseEncoder {
 public:
  ChunkEncoder(api::ResponseMeta meta, bool include_usage, bool chat)
      : meta_(std::move(meta)), include_usage_(include_usage), chat_(chat) {}

  // Chat: each choice's first chunk carries the role.
  std::string StreamStart(int32_t num_choices) override {
    std::string sse;
    for (int32_t i = 0; chat_ && i < num_choices; ++i) {
      sse += net::EncodeSseData(api::ChatRoleChunkJson(meta_, i, include_usage_));
    }
    return sse;
  }
  std::string StreamDelta(const api::ChoiceOutput& delta) override {
    if (!chat_) return net::EncodeSseData(api::CompletionChunkJson(meta_, delta, include_usage_));
    std::string sse;
    for (const std::string& chunk : api::ChatChunksJson(meta_, delta, include_usage_)) sse += net::EncodeSseData(chunk);
    return sse;
  }
  // The failure in band (the 200 head is long gone), or the usage chunk; then [DONE].
  std::string StreamEnd(const api::Usage& usage, const std::optional<std::string>&, const Status& error) override {
    std::string sse;
    if (!error.ok()) {
      sse += net::EncodeSseData(api::MakeErrorReply(error).body);
    } else if (include_usage_) {
      sse += net::EncodeSseData(chat_ ? api::ChatUsageChunkJson(meta_, usage) : api::CompletionUsageChunkJson(meta_, usage));
    }
    return sse + net::EncodeSseData(api::kStreamDone);
  }
  std::string Whole(const std::vector<api::ChoiceOutput>& choices, const api::Usage& usage) override {
    return chat_ ? api::ChatResponseJson(meta_, choices, usage) : api::CompletionResponseJson(meta_, choices, usage);
  }

 private:
  const api::ResponseMeta meta_;
  const bool include_usage_;
  const bool chat_;
};

// Typed events ("event: response.output_text.delta"), and no [DONE]: the Responses API
// ends with response.completed.
class ResponsesEncoder final : public ResponseEncoder {
 public:
  ResponsesEncoder(api::ResponseMeta meta, api::Json echo, std::function<void(const api::Json&)> on_finished)
      : builder_(meta.id, meta.created, meta.model, std::move(echo)), on_finished_(std::move(on_finished)) {}

  std::string StreamStart(int32_t) override { return Encode(builder_.Start()); }
  std::string StreamDelta(const api::ChoiceOutput& delta) override { return Encode(builder_.Add(delta)); }
  std::string StreamEnd(const api::Usage& usage, const std::optional<std::string>& finish_reason,
                        const Status& error) override {
    std::string sse = Encode(builder_.Finish(finish_reason, usage, error));
    if (error.ok() && on_finished_) on_finished_(builder_.Response());
    return sse;
  }
  std::string Whole(const std::vector<api::ChoiceOutput>& choices, const api::Usage& usage) override {
    for (const api::ChoiceOutput& choice : choices) builder_.Add(choice);
    builder_.Finish(choices.empty() ? std::nullopt : choices.front().finish_reason, usage, OkStatus());
    api::Json response = builder_.Response();
    if (on_finished_) on_finished_(response);
    return api::Dump(response);
  }

 private:
  static std::string Encode(const std::vector<api::Json>& events) {
    std::string sse;
    for (const api::Json& event : events) sse += net::EncodeSseEvent({event["type"].get<std::string>(), api::Dump(event), "", {}});
    return sse;
  }

  api::ResponsesBuilder builder_;
  const std::function<void(const api::Json&)> on_finished_;
};

}  // namespace

std::unique_ptr<ResponseEncoder> MakeCompletionEncoder(api::ResponseMeta meta, bool include_usage) {
  return std::make_unique<ChunkEncoder>(std::move(meta), include_usage, /*chat=*/false);
}

std::unique_ptr<ResponseEncoder> MakeChatEncoder(api::ResponseMeta meta, bool include_usage) {
  return std::make_unique<ChunkEncoder>(std::move(meta), include_usage, /*chat=*/true);
}

std::unique_ptr<ResponseEncoder> MakeResponsesEncoder(api::ResponseMeta meta, api::Json echo,
                                                      std::function<void(const api::Json&)> on_finished) {
  return std::make_unique<ResponsesEncoder>(std::move(meta), std::move(echo), std::move(on_finished));
}

}  // namespace surge
