// libFuzzer target: the Batch API's readers of outside bytes (batch/batch_input.cc and
// batch_json.cc compiled in alone, without the store, routes or HTTP). Byte 0 picks:
//   0: ParseBatchInput(rest) against the /v1/completions endpoint; 1: against any endpoint.
//      Lines or errors, never both; each kept body is a JSON object without stream: true.
//   2: MakeLineResult with `rest` as an engine's answer body (JSON or not, any bytes, any
//      depth): the output line is valid JSON, whatever the answer held.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/check.h"
#include "batch/batch_input.h"
#include "batch/batch_json.h"

namespace {

void CheckInput(std::string_view text, std::string_view endpoint) {
  surge::batch::BatchInputLimits limits;
  limits.max_lines = 64;
  limits.max_errors = 8;
  limits.max_line_bytes = 16 << 10;
  const surge::batch::ParsedBatchInput parsed = surge::batch::ParseBatchInput(text, endpoint, limits);
  CHECK(parsed.lines.empty() != parsed.errors.empty());
  CHECK(parsed.errors.size() <= limits.max_errors);
  for (const surge::batch::BatchLine& line : parsed.lines) {
    const nlohmann::json body = nlohmann::json::parse(line.body, nullptr, /*allow_exceptions=*/false);
    CHECK(body.is_object()) << line.body;
    CHECK(!body.contains("stream") || body["stream"] == false) << line.body;
    CHECK(surge::batch::IsBatchEndpoint(line.url)) << line.url;
    CHECK(!line.custom_id.empty());
  }
}

void CheckAnswer(std::string_view body, int status_code) {
  const surge::batch::BatchLine line{1, "c", "/v1/completions", "{}"};
  const surge::batch::LineResult result =
      surge::batch::MakeLineResult(line, "batch_f", {surge::OkStatus(), status_code, "req", std::string(body)});
  const nlohmann::json out = nlohmann::json::parse(result.output_line, nullptr, /*allow_exceptions=*/false);
  CHECK(out.is_object()) << result.output_line;
  CHECK(result.ok == (status_code == 200));
  if (!result.ok) CHECK(out["error"]["code"].is_string());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: CheckInput(rest, "/v1/completions"); break;
    case 1: CheckInput(rest, ""); break;
    default: CheckAnswer(rest, data[0] % 2 == 0 ? 200 : 400); break;
  }
  return 0;
}
