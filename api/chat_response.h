// JSON builders for /v1/chat/completions answers, exactly in OpenAI's shape: the whole
// chat.completion, the chat.completion.chunk stream (role first, then content deltas,
// finish_reason on the last), and the closing usage chunk.
#pragma once

#include <string>
#include <vector>

#include "api/response_common.h"

namespace surge::api {

// {"id", "object": "chat.completion", "created", "model", "choices": [{"index",
// "message": {"role": "assistant", "content", "refusal": null}, "logprobs",
// "finish_reason"}], "usage"}. A choice with `reasoning` also gets "reasoning_content";
// then an empty part is null (vLLM's deepseek_r1: no answer yet is content null). A
// choice with tool calls gets "tool_calls": [{"id", "type": "function", "function":
// {"name", "arguments"}}], and content null when there is no other text.
std::string ChatResponseJson(const ResponseMeta& meta, const std::vector<ChoiceOutput>& choices,
                             const Usage& usage);
// A choice's first chunk: delta {"role": "assistant", "content": ""}.
std::string ChatRoleChunkJson(const ResponseMeta& meta, int32_t index, bool include_usage);
// A content delta; an empty text gives "delta": {} (the finishing chunk). A non-empty
// `reasoning` comes as "reasoning_content" in the same delta.
std::string ChatChunkJson(const ResponseMeta& meta, const ChoiceOutput& choice, bool include_usage);
// ChatChunkJson, or for a delta with tool calls, OpenAI's tool-call chunks: the text (if
// any), then per call one chunk {"index", "id", "type": "function", "function": {"name",
// "arguments": ""}} and one with only {"index", "function": {"arguments"}}; the last
// carries the finish_reason.
std::vector<std::string> ChatChunksJson(const ResponseMeta& meta, const ChoiceOutput& choice, bool include_usage);
std::string ChatUsageChunkJson(const ResponseMeta& meta, const Usage& usage);

// {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}],
//  "refusal": null}
Json ChatLogprobsJson(const std::vector<TokenLogprobInfo>& logprobs);

}  // namespace surge::api
