// JSON builders for /v1/completions answers, exactly in OpenAI's shape: the whole
// response, the stream chunks, and the closing usage chunk.
#pragma once

#include <string>
#include <vector>

#include "api/response_common.h"

namespace surge::api {

// {"id", "object": "text_completion", "created", "model", "choices": [...], "usage"}
std::string CompletionResponseJson(const ResponseMeta& meta, const std::vector<ChoiceOutput>& choices,
                                   const Usage& usage);
// One streamed choice delta (same object type as the whole response, as OpenAI streams
// it). With include_usage every chunk carries "usage": null.
std::string CompletionChunkJson(const ResponseMeta& meta, const ChoiceOutput& choice, bool include_usage);
// The last chunk of a stream with include_usage: "choices": [] and the usage.
std::string CompletionUsageChunkJson(const ResponseMeta& meta, const Usage& usage);

// OpenAI's legacy logprobs object: {"tokens", "token_logprobs", "top_logprobs" (one
// {token: logprob} map per token, the chosen token included), "text_offset"}.
Json CompletionLogprobsJson(const std::vector<TokenLogprobInfo>& logprobs, int64_t text_offset);

}  // namespace surge::api
