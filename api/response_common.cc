#include "api/response_common.h"

#include <algorithm>
#include <chrono>

#include "base/crypto.h"

namespace surge::api {

std::string NewResponseId(std::string_view prefix) {
  // From OpenSSL's CSPRNG, not a seeded generator: a stored response is fetched by its id
  // (GET /v1/responses/{id}, previous_response_id), so ids must not be predictable from others.
  return RandomId(prefix, 32, "0123456789abcdef");
}

int64_t NumChars(std::string_view text) {
  int64_t count = 0;
  for (char c : text) count += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return count;
}

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Json UsageJson(const Usage& usage) {
  Json json{{"prompt_tokens", usage.prompt_tokens},
            {"completion_tokens", usage.completion_tokens},
            {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", usage.cached_tokens}}}};
  if (usage.reasoning_tokens) json["completion_tokens_details"] = {{"reasoning_tokens", *usage.reasoning_tokens}};
  return json;
}

double ClampLogprob(double logprob) { return std::max(logprob, -9999.0); }

std::string Dump(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace surge::api
