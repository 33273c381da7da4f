#include "batch/batch_input.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>

#include "base/json_depth.h"

namespace surge::batch {
namespace {

using Json = nlohmann::ordered_json;  // keeps the body's key order, as the client wrote it

constexpr std::string_view kLineKeys[] = {"custom_id", "method", "url", "body"};

BatchError LineError(int64_t line_no, std::string code, std::string message, std::string param = {}) {
  return {std::move(code), std::move(message), std::move(param), line_no};
}

// The first problem of one parsed line, or nullopt when it is a valid request.
std::optional<BatchError> CheckLine(const Json& request, int64_t line_no, std::string_view endpoint) {
  if (!request.is_object()) return LineError(line_no, "invalid_json_line", "each line must be a JSON object");
  for (const auto& [key, value] : request.items()) {
    if (std::find(std::begin(kLineKeys), std::end(kLineKeys), key) == std::end(kLineKeys)) {
      return LineError(line_no, "invalid_request", "unknown field '" + key + "' (a line has custom_id, method, url, body)", key);
    }
  }
  const auto custom_id = request.find("custom_id");
  if (custom_id == request.end() || !custom_id->is_string() || custom_id->get<std::string>().empty()) {
    return LineError(line_no, "missing_custom_id", "custom_id must be a non-empty string", "custom_id");
  }
  if (request.value("method", Json()) != "POST") {
    return LineError(line_no, "invalid_method", "method must be \"POST\"", "method");
  }
  const Json url = request.value("url", Json());
  if (!url.is_string() || !IsBatchEndpoint(url.get<std::string>())) {
    return LineError(line_no, "invalid_url", "url must be one of /v1/chat/completions, /v1/completions, /v1/embeddings", "url");
  }
  if (!endpoint.empty() && url.get<std::string>() != endpoint) {
    return LineError(line_no, "mismatched_url",
                     "url " + url.get<std::string>() + " differs from the batch's endpoint " + std::string(endpoint), "url");
  }
  const auto body = request.find("body");
  if (body == request.end() || !body->is_object()) return LineError(line_no, "invalid_body", "body must be a JSON object", "body");
  if (body->value("stream", false) == true) {
    return LineError(line_no, "invalid_body", "stream is not supported in a batch: each answer is written whole", "body.stream");
  }
  return std::nullopt;
}

}  // namespace

bool IsBatchEndpoint(std::string_view url) {
  return std::find(std::begin(kBatchEndpoints), std::end(kBatchEndpoints), url) != std::end(kBatchEndpoints);
}

ParsedBatchInput ParseBatchInput(std::string_view jsonl, std::string_view endpoint, const BatchInputLimits& limits) {
  ParsedBatchInput parsed;
  std::unordered_set<std::string> custom_ids;
  auto fail = [&](BatchError error) {
    if (parsed.errors.size() < limits.max_errors) parsed.errors.push_back(std::move(error));
  };
  int64_t line_no = 0;
  size_t num_requests = 0;  // non-blank lines, valid or not
  while (!jsonl.empty()) {
    const size_t end = jsonl.find('\n');
    std::string_view text = jsonl.substr(0, end);
    jsonl.remove_prefix(end == std::string_view::npos ? jsonl.size() : end + 1);
    ++line_no;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (++num_requests > limits.max_lines) {
      fail(LineError(line_no, "too_many_requests", "a batch holds at most " + std::to_string(limits.max_lines) + " requests"));
      break;
    }
    if (text.size() > limits.max_line_bytes || !JsonDepthWithin(text, limits.max_json_depth)) {
      fail(LineError(line_no, "invalid_json_line", "the line is too large or nests too deep"));
      continue;
    }
    Json request = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded()) {
      fail(LineError(line_no, "invalid_json_line", "the line is not valid JSON"));
      continue;
    }
    if (std::optional<BatchError> error = CheckLine(request, line_no, endpoint)) {
      fail(std::move(*error));
      continue;
    }
    std::string custom_id = request["custom_id"].get<std::string>();
    if (!custom_ids.insert(custom_id).second) {
      fail(LineError(line_no, "duplicate_custom_id", "custom_id '" + custom_id + "' appears more than once", "custom_id"));
      continue;
    }
    parsed.lines.push_back({line_no, std::move(custom_id), request["url"].get<std::string>(), request["body"].dump()});
  }
  if (parsed.lines.empty() && parsed.errors.empty()) fail({"empty_file", "the input file holds no requests", "", std::nullopt});
  if (!parsed.errors.empty()) parsed.lines.clear();
  return parsed;
}

}  // namespace surge::batch
