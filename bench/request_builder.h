// Builds the HTTP request (path and OpenAI JSON body) for one turn of a session: always
// streamed, with stream_options.include_usage so the server reports exact token counts.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "bench/config.h"
#include "bench/workload.h"

namespace surge::bench {

struct RequestOptions {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;        // omitted from the body when empty
  bool ignore_eos = true;   // so that max_tokens is the output length
  std::optional<double> temperature;  // sent unless a jsonl body names its own; unset: the server's default
};

struct BuiltRequest {
  std::string path;  // "/v1/completions" or "/v1/chat/completions"
  std::string body;
  int64_t prompt_tokens_estimate = 0;  // used when the server reports no usage
};

// `answers` are the assistant's replies to turns [0, turn) and `answer_tokens` their token
// count: multi-turn requests resend the whole conversation. A jsonl session's raw body is
// sent as given, plus stream settings and the model when it names none.
BuiltRequest BuildRequest(const RequestOptions& options, const Session& session, size_t turn,
                          std::span<const std::string> answers, int64_t answer_tokens);

}  // namespace surge::bench
