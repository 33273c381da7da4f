// What completion and chat responses share: the response's identity, usage, per-token
// logprobs and one choice's output, plus ids and the stream terminator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_reader.h"

namespace surge::api {

// Identical in every chunk of one stream.
struct ResponseMeta {
  std::string id;       // "cmpl-..." / "chatcmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
  std::string service_tier = {};  // echoed when the request gave one ("default", "flex", "priority")
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens served from the prefix cache
  // Completion tokens spent thinking (chat under a reasoning parser); nullopt: not counted.
  std::optional<int64_t> reasoning_tokens;
};

struct TopLogprob {
  std::string token;  // the token's bytes as text (U+FFFD for a partial character)
  double logprob = 0;
  std::string bytes;  // the token's own bytes (a partial character's too)
};

// `token` is the text the chosen token added to the output, so a choice's tokens join into
// its text; `bytes` are the token's own bytes, which join into the text's UTF-8 (a
// character split across tokens: its bytes are spread over them, its text goes to the
// last).
struct TokenLogprobInfo {
  std::string token;
  double logprob = 0;
  std::string bytes;
  std::vector<TopLogprob> top;  // best first
  // false: a prompt's first token (echo), which nothing scores: null logprob and top.
  bool scored = true;
};

// One tool call a chat choice made: JSON {"id", "type": "function", "function": {"name",
// "arguments"}} (streams: "index" too).
struct ToolCallOutput {
  int32_t index = 0;      // within the choice
  std::string id;         // "call_..."; streams: "" in a later fragment of the call's arguments
  std::string name;
  std::string arguments;  // JSON text
};

// One choice's text (all of it, or one streamed delta of it).
struct ChoiceOutput {
  int32_t index = 0;
  std::string text;  // under a reasoning parser: the answer only
  std::optional<std::vector<TokenLogprobInfo>> logprobs;  // nullopt: not requested
  int64_t text_offset = 0;  // completions: characters of this choice's text before `text`
  std::optional<std::string> finish_reason;  // "stop", "length", "abort"; nullopt: not yet
  // Chat under a reasoning parser: the thinking (JSON `reasoning_content`); nullopt: no parser.
  std::optional<std::string> reasoning;
  // Chat with tool-call parsing: the calls found (in this delta); `text` is the rest.
  std::vector<ToolCallOutput> tool_calls;
};

// Characters (code points) of UTF-8 text, as OpenAI's text_offset counts them.
int64_t NumChars(std::string_view text);

// A fresh id: `prefix` + 32 random hex digits ("cmpl-1f3a...").
std::string NewResponseId(std::string_view prefix);
int64_t UnixSeconds();

// {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details": {"cached_tokens"}},
// plus "completion_tokens_details": {"reasoning_tokens"} when those were counted.
Json UsageJson(const Usage& usage);
// JSON cannot hold -inf: as vLLM, logprobs are clamped to -9999.
double ClampLogprob(double logprob);
// Serializes for the wire; invalid UTF-8 never throws (it cannot occur in engine text,
// which is complete UTF-8, but a token's own text may be a lone byte).
std::string Dump(const Json& value);

// The payload of the stream's last event: "data: [DONE]".
inline constexpr std::string_view kStreamDone = "[DONE]";

}  // namespace surge::api
