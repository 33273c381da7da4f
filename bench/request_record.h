// RequestRecord: what one request measured — its timings, token counts and, when it
// failed, the kind of failure ("connect", "http_500", "malformed_sse", "truncated", ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace surge::bench {

struct RequestRecord {
  int64_t session_index = 0;
  int32_t turn = 0;
  double send_s = 0;              // when it was sent, since the round started
  double latency_s = 0;           // send to the last byte (or to the failure)
  std::optional<double> ttft_s{}; // send to the first chunk with content
  std::vector<double> itl_s{};    // every gap between consecutive content chunks
  int64_t prompt_tokens = 0;      // the server's usage, else the workload's estimate
  int64_t output_tokens = 0;      // the server's usage, else the content chunks counted
  bool usage_reported = false;
  std::string error_kind{};       // empty when the request succeeded
  std::string error_message{};    // the first words of the cause, for the report
  std::string output_text{};      // kept only when a later turn resends it

  bool ok() const { return error_kind.empty(); }
  // (latency - TTFT) / (output tokens - 1); absent for fewer than two tokens.
  std::optional<double> tpot_s() const {
    if (!ok() || !ttft_s || output_tokens < 2) return std::nullopt;
    return (latency_s - *ttft_s) / static_cast<double>(output_tokens - 1);
  }
};

}  // namespace surge::bench
