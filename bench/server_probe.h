// What bench asks a server before loading it: the model it serves (/v1/models) and how
// many tokens its tokenizer makes of the word list (/tokenize, vLLM or llama.cpp style).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "net/http_client.h"

namespace surge::bench {

// "http://h:8000/v1/" -> "http://h:8000": the base the API paths are appended to.
// INVALID_ARGUMENT (or UNIMPLEMENTED for https) when it is not an http:// URL.
StatusOr<std::string> NormalizeBaseUrl(std::string_view url);

// The first id that GET /v1/models lists.
StatusOr<std::string> FirstModelId(net::HttpClient& client, const std::string& base_url,
                                   const net::HttpHeaders& headers);

struct Calibration {
  double tokens_per_word = 1.0;
  bool measured = false;
  std::string note;  // how the ratio was obtained, for the report
};

// Tokenizes two random texts of the word list (100 and 600 words) and takes the slope, so
// that BOS and template tokens cancel out. Falls back to 1 token per word, with a note,
// when the server has no usable /tokenize.
Calibration CalibrateTokensPerWord(net::HttpClient& client, const std::string& base_url, const std::string& model,
                                   const net::HttpHeaders& headers, uint64_t seed);

// The engine's busy seconds so far (surge serve's surge_engine_busy_seconds_total, summed over
// its series) from GET /metrics; nullopt when the server does not expose it (another server,
// an error). Two reads around a round give its busy fraction, which `surge scale simulate`
// uses for the busy-fraction target.
std::optional<double> ReadServerBusySeconds(net::HttpClient& client, const std::string& base_url,
                                            const net::HttpHeaders& headers);

}  // namespace surge::bench
