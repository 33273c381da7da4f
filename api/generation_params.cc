#include "api/generation_params.h"

#include <charconv>
#include <climits>
#include <cmath>
#include <sstream>
#include <string>


namespace surge::api {
namespace {

// "300" -> 300; nullopt unless the whole key is a non-negative decimal int32.
std::optional<int32_t> ParseTokenIdKey(std::string_view key) {
  int32_t id = 0;
  const char* end = key.data() + key.size();
  auto [ptr, ec] = std::from_chars(key.data(), end, id);
  if (key.empty() || ec != std::errc() || ptr != end || id < 0) return std::nullopt;
  return id;
}

// OpenAI's stop: one string or a list of strings; none may be empty. Every stop string
// is matched against each new token, so their number and size are bounded.
void ReadStop(FieldReader& reader, const RequestLimits& limits, std::vector<std::string>* stop) {
  const Json* value = reader.Find("stop");
  if (value == nullptr) return;
  if (value->is_string()) {
    stop->push_back(value->get<std::string>());
  } else if (value->is_array()) {
    if (value->size() > limits.max_stop) {
      return reader.Require(false, "stop", "stop holds " + std::to_string(value->size()) +
                                               " strings; the limit is " + std::to_string(limits.max_stop));
    }
    for (const Json& item : *value) {
      if (!item.is_string()) {
        return reader.Require(false, "stop", "stop must be a string or a list of strings, got a list holding " +
                                                 JsonTypeName(item));
      }
      stop->push_back(item.get<std::string>());
    }
  } else {
    return reader.Require(false, "stop", "stop must be a string or a list of strings, got " + JsonTypeName(*value));
  }
  for (const std::string& text : *stop) {
    reader.Require(!text.empty(), "stop", "stop strings must not be empty");
    reader.Require(text.size() <= limits.max_stop_bytes, "stop",
                   "stop strings must be at most " + std::to_string(limits.max_stop_bytes) + " bytes");
  }
}

void ReadStopTokenIds(FieldReader& reader, const RequestLimits& limits, std::vector<int32_t>* ids) {
  const Json* value = reader.Find("stop_token_ids");
  if (value == nullptr) return;
  if (!value->is_array()) {
    return reader.Require(false, "stop_token_ids",
                          "stop_token_ids must be a list of token ids, got " + JsonTypeName(*value));
  }
  if (value->size() > limits.max_stop_token_ids) {
    return reader.Require(false, "stop_token_ids", "stop_token_ids holds " + std::to_string(value->size()) +
                                                       " ids; the limit is " +
                                                       std::to_string(limits.max_stop_token_ids));
  }
  for (const Json& item : *value) {
    std::optional<int64_t> id = AsInteger(item);
    if (!id || *id < 0 || *id > INT32_MAX) {
      return reader.Require(false, "stop_token_ids", "stop_token_ids must hold non-negative integers");
    }
    ids->push_back(static_cast<int32_t>(*id));
  }
}

// OpenAI's logit_bias: {"token id": bias}, keys the decimal ids as strings, biases in
// [-100, 100]. Whether an id is in the vocabulary only the server knows.
void ReadLogitBias(FieldReader& reader, const RequestLimits& limits, std::vector<std::pair<int32_t, double>>* bias) {
  const Json* value = reader.Find("logit_bias");
  if (value == nullptr) return;
  if (!value->is_object()) {
    return reader.Require(false, "logit_bias", "logit_bias must be an object of token id -> bias, got " +
                                                   JsonTypeName(*value));
  }
  if (value->size() > limits.max_logit_bias) {
    return reader.Require(false, "logit_bias", "logit_bias holds " + std::to_string(value->size()) +
                                                   " entries; the limit is " + std::to_string(limits.max_logit_bias));
  }
  for (const auto& [key, item] : value->items()) {
    const std::optional<int32_t> id = ParseTokenIdKey(key);
    if (!id) return reader.Require(false, "logit_bias", "logit_bias keys must be token ids, got '" + key + "'");
    if (!item.is_number() || !(item.get<double>() >= -100 && item.get<double>() <= 100)) {
      return reader.Require(false, "logit_bias", "logit_bias values must be numbers in [-100, 100], got " +
                                                     item.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    bias->emplace_back(*id, item.get<double>());
  }
}

void ReadStreamOptions(FieldReader& reader, GenerationParams* params) {
  const Json* options = reader.Find("stream_options");
  if (options == nullptr) return;
  if (!options->is_object()) {
    return reader.Require(false, "stream_options", "stream_options must be an object, got " + JsonTypeName(*options));
  }
  // As OpenAI: options for a stream that is not requested are a mistake worth reporting.
  reader.Require(params->stream, "stream_options", "stream_options is only allowed when stream is true");
  FieldReader inner(*options);
  inner.Bool("include_usage", &params->include_usage);
  // vLLM's usage on every chunk. false is what surge does; GuideLLM sends the field, so a
  // client may turn it off rather than meet a 400 for naming it.
  bool continuous_usage_stats = false;
  inner.Bool("continuous_usage_stats", &continuous_usage_stats);
  inner.Require(!continuous_usage_stats, "continuous_usage_stats",
                "continuous_usage_stats: true is not supported; the usage comes once, in the last chunk "
                "(include_usage)");
  inner.RefuseUnread({});
  if (inner.failed()) {
    reader.Fail(InvalidParam("stream_options." + inner.error().param, inner.error().status.message()));
  }
}

// ", got -0.5": the value as the engine's limit table prints it (engine/request_limits.cc),
// so that `surge serve` and `surge generate` refuse with the same words.
std::string Got(double value) {
  std::ostringstream out;
  out << value;
  return ", got " + out.str();
}

// Written as !(in range) so that NaN fails too (JSON has no NaN, but 1e400 is inf).
void ReadSampling(FieldReader& reader, GenerationParams* params) {
  if (reader.Number("temperature", &params->temperature)) {
    reader.Require(params->temperature >= 0 && std::isfinite(params->temperature), "temperature",
                   "temperature must be >= 0" + Got(params->temperature));
  }
  if (reader.Number("top_p", &params->top_p)) {
    reader.Require(params->top_p > 0 && params->top_p <= 1, "top_p", "top_p must be in (0, 1]" + Got(params->top_p));
  }
  reader.IntInRange("top_k", -1, INT32_MAX, &params->top_k);
  if (reader.Number("min_p", &params->min_p)) {
    reader.Require(params->min_p >= 0 && params->min_p <= 1, "min_p", "min_p must be in [0, 1]" + Got(params->min_p));
  }
  for (auto [name, value] : {std::pair{"presence_penalty", &params->presence_penalty},
                             std::pair{"frequency_penalty", &params->frequency_penalty}}) {
    if (reader.Number(name, value)) {
      reader.Require(*value >= -2 && *value <= 2, name, std::string(name) + " must be in [-2, 2]" + Got(*value));
    }
  }
  if (reader.Number("repetition_penalty", &params->repetition_penalty)) {
    reader.Require(params->repetition_penalty > 0 && std::isfinite(params->repetition_penalty),
                   "repetition_penalty", "repetition_penalty must be > 0" + Got(params->repetition_penalty));
  }
  int64_t seed = 0;
  if (reader.Int("seed", &seed)) params->seed = seed;
}

// `priority`: an integer, or a tier name as a string.
void ReadPriority(FieldReader& reader, int32_t* priority) {
  const Json* value = reader.Find("priority");
  if (value == nullptr || !value->is_string()) {
    reader.IntInRange("priority", INT32_MIN, INT32_MAX, priority);
    return;
  }
  const std::optional<int32_t> parsed = ParsePriority(value->get<std::string>());
  reader.Require(parsed.has_value(), "priority", std::string("priority must be ") + kPriorityValues);
  if (parsed) *priority = *parsed;
}

// `service_tier` (OpenAI's): a tier by OpenAI's name; with `priority` too, they must agree.
void ReadServiceTier(FieldReader& reader, GenerationParams* params) {
  std::string tier;
  if (!reader.String("service_tier", &tier)) return;
  std::string echo;
  const std::optional<int32_t> priority = ServiceTierPriority(tier, &echo);
  reader.Require(priority.has_value(), "service_tier", std::string("service_tier must be ") + kServiceTierValues);
  if (!priority) return;
  if (reader.Find("priority") != nullptr) {
    reader.Require(params->priority == *priority, "service_tier",
                   "service_tier '" + tier + "' and priority " + std::to_string(params->priority) + " disagree; give one");
  }
  params->priority = *priority;
  params->service_tier = echo;
}

// SGLang's extensions, which sgl-router and vllm-router write, at SGLang's defaults, into
// every completion and chat body they forward (docs/GATEWAYS.md): served at those defaults.
void ReadSglangDefaults(FieldReader& reader) {
  reader.BoolOnly("no_stop_trim", false, "a matched stop string is always cut from the output");
  reader.BoolOnly("return_hidden_states", false, "this server returns no hidden states");
}

}  // namespace

void ReadGenerationParams(FieldReader& reader, const RequestLimits& limits, GenerationParams* params,
                          int64_t min_max_tokens) {
  reader.String("model", &params->model);
  int64_t max_tokens = 0;
  if (reader.IntAtLeast("max_tokens", min_max_tokens, &max_tokens)) params->max_tokens = max_tokens;
  ReadSampling(reader, params);
  ReadStop(reader, limits, &params->stop);
  ReadStopTokenIds(reader, limits, &params->stop_token_ids);
  ReadLogitBias(reader, limits, &params->logit_bias);
  reader.Bool("ignore_eos", &params->ignore_eos);
  reader.IntInRange("n", 1, kMaxN, &params->n);
  reader.Bool("stream", &params->stream);
  ReadStreamOptions(reader, params);
  reader.Bool("skip_special_tokens", &params->skip_special_tokens);
  ReadSglangDefaults(reader);
  reader.String("user", &params->user);
  ReadPriority(reader, &params->priority);
  ReadServiceTier(reader, params);
  ReadOutputConstraint(reader, &params->constraint);
  double timeout_s = 0;
  if (reader.Number("timeout", &timeout_s)) {
    // !(in range) so that NaN and inf (1e400) fail too.
    reader.Require(timeout_s > 0 && timeout_s <= kMaxTimeoutSeconds, "timeout",
                   "timeout must be a number of seconds in (0, " + std::to_string(static_cast<int>(kMaxTimeoutSeconds)) +
                       "], got " + std::to_string(timeout_s));
    params->timeout_s = timeout_s;
  }
}

std::optional<int32_t> ParsePriority(std::string_view text) {
  if (text == "realtime") return kRealtimePriority;
  if (text == "normal") return kNormalPriority;
  if (text == "batch") return kBatchPriority;
  if (text.empty() || text.size() > 11) return std::nullopt;
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < INT32_MIN || value > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(value);
}

std::optional<int32_t> ServiceTierPriority(std::string_view service_tier, std::string* echo) {
  if (service_tier == "priority") return *echo = "priority", kRealtimePriority;
  if (service_tier == "flex") return *echo = "flex", kBatchPriority;
  if (service_tier == "auto" || service_tier == "default") return *echo = "default", kNormalPriority;
  return std::nullopt;
}

const char* PriorityTier(int32_t priority) {
  if (priority < 0) return "realtime";
  return priority == 0 ? "normal" : "batch";
}

}  // namespace surge::api
