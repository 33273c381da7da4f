#include "api/response_common.h"

#include <algorithm>
#include <chrono>
#include <random>

namespace surge::api {

std::string NewResponseId(std::string_view prefix) {
  // One generator per thread: ids are made on several server threads at once.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(prefix);
  for (int half = 0; half < 2; ++half) {
    uint64_t bits = rng();
    for (int i = 0; i < 16; ++i, bits >>= 4) id += kHex[bits & 15];
  }
  return id;
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
