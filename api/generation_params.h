// GenerationParams: the sampling, stopping and streaming parameters that /v1/completions
// and /v1/chat/completions share, read and range-checked as vLLM's OpenAI server does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/error.h"
#include "api/field_reader.h"
#include "api/output_constraint.h"
#include "api/request_body.h"

namespace surge::api {

inline constexpr int32_t kMaxN = 128;          // OpenAI's limit on choices per request
inline constexpr int32_t kMaxLogprobs = 20;    // top alternatives per token (OpenAI's and vLLM's cap)
inline constexpr double kMaxTimeoutSeconds = 86400;  // `timeout`: one day; more is a mistake

struct GenerationParams {
  std::string model;                 // "" when absent: the served model
  std::optional<int64_t> max_tokens; // absent: whatever context the prompt leaves
  std::string max_tokens_param = "max_tokens";  // the field it came from (chat: max_completion_tokens)
  double temperature = 1.0;          // >= 0; 0 is greedy
  double top_p = 1.0;                // (0, 1]
  int32_t top_k = -1;                // -1 or 0: off
  double min_p = 0.0;                // [0, 1]
  std::optional<int64_t> seed;
  std::vector<std::string> stop;     // stop strings (OpenAI: a string or a list)
  std::vector<int32_t> stop_token_ids;
  double presence_penalty = 0.0;     // [-2, 2]
  double frequency_penalty = 0.0;    // [-2, 2]
  double repetition_penalty = 1.0;   // > 0
  std::vector<std::pair<int32_t, double>> logit_bias;  // (token id, bias in [-100, 100]), ids not yet vocab-checked
  int32_t top_logprobs = -1;         // -1: no logprobs; k >= 0: the chosen token and k more
  bool ignore_eos = false;
  int32_t n = 1;
  bool stream = false;
  bool include_usage = false;        // stream_options.include_usage
  bool skip_special_tokens = true;
  std::string user;
  int32_t priority = 0;              // lower is more urgent; an integer or a tier name
  // OpenAI's `service_tier` as the answer echoes it ("default", "flex", "priority"); ""
  // when the request gave none. It sets `priority` (ServiceTierPriority).
  std::string service_tier;
  OutputConstraint constraint;       // response_format / guided_*: kNone when the output is free
  // `timeout`: seconds from arrival until the request is ended with 504 (in (0, one day]);
  // absent: the server's --request-timeout.
  std::optional<double> timeout_s;
};

// Priority tiers: names for the priorities clients use most. Any integer is accepted too.
inline constexpr int32_t kRealtimePriority = -10;
inline constexpr int32_t kNormalPriority = 0;
inline constexpr int32_t kBatchPriority = 10;
// "realtime" / "normal" / "batch" -> -10 / 0 / 10; an integer in int32 range as written
// ("-3"); nullopt otherwise.
std::optional<int32_t> ParsePriority(std::string_view text);
// The tier a priority counts under in metrics: "realtime" below 0, "normal" at 0,
// "batch" above.
const char* PriorityTier(int32_t priority);
// OpenAI's service_tier onto the tiers: "priority" -> realtime, "flex" -> batch, "auto" and
// "default" -> normal; nullopt for another value. `echo`: what the answer says ("auto" is
// served as "default", as OpenAI answers).
std::optional<int32_t> ServiceTierPriority(std::string_view service_tier, std::string* echo);
inline constexpr char kServiceTierValues[] = "\"auto\", \"default\", \"flex\" or \"priority\"";
inline constexpr char kPriorityValues[] =
    "an integer (lower is more urgent) or one of \"realtime\", \"normal\", \"batch\"";

// Reads every shared field of `object` into `params` (max_tokens only; chat's
// max_completion_tokens is the caller's). Errors are kept in `reader`.
// `min_max_tokens`: 1, or 0 where a request may only score its prompt (completions' echo).
void ReadGenerationParams(FieldReader& reader, const RequestLimits& limits, GenerationParams* params,
                          int64_t min_max_tokens = 1);

}  // namespace surge::api
