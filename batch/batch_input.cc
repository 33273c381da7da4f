#include "batch/batch_input.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>

#include "base/json_access.h"

namespace surge::batch {
namespace {

using json::Json;  // ordered: keeps the body's key order, as the client wrote it

constexpr std::string_view kLineKeys[] = {"custom_id", "method", "url", "body"};

BatchError LineError(int64_t line_no, std::string code, std::string message, std::string param = {}) {
  return {std::move(code), std::move(message), std::move(param), line_no};
}

// What a valid line holds; `body` borrows from the parsed line.
struct LineFields {
  std::string custom_id;
  std::string method;
  std::string url;
  const Json* body = nullptr;
};

// The first problem of one parsed line, or nullopt when it is a valid request (then
// `fields` holds it). Every field is read through json::ObjectReader: a value of the wrong
// type is an error of the line, never an exception on the runner's thread.
std::optional<BatchError> CheckLine(const Json& request, int64_t line_no, std::string_view endpoint, LineFields* fields) {
  if (!request.is_object()) return LineError(line_no, "invalid_json_line", "each line must be a JSON object");
  for (const auto& [key, value] : request.items()) {
    if (std::find(std::begin(kLineKeys), std::end(kLineKeys), key) == std::end(kLineKeys)) {
      return LineError(line_no, "invalid_request", "unknown field '" + key + "' (a line has custom_id, method, url, body)", key);
    }
  }
  json::ObjectReader line(request, "line " + std::to_string(line_no));
  if (!line.String("custom_id", &fields->custom_id).ok() || fields->custom_id.empty()) {
    return LineError(line_no, "missing_custom_id", "custom_id must be a non-empty string", "custom_id");
  }
  if (!line.String("method", &fields->method).ok() || fields->method != "POST") {
    return LineError(line_no, "invalid_method", "method must be \"POST\"", "method");
  }
  if (!line.String("url", &fields->url).ok() || !IsBatchEndpoint(fields->url)) {
    return LineError(line_no, "invalid_url", "url must be one of /v1/chat/completions, /v1/completions, /v1/embeddings", "url");
  }
  if (!endpoint.empty() && fields->url != endpoint) {
    return LineError(line_no, "mismatched_url", "url " + fields->url + " differs from the batch's endpoint " + std::string(endpoint),
                     "url");
  }
  if (!line.Object("body", &fields->body).ok() || fields->body == nullptr) {
    return LineError(line_no, "invalid_body", "body must be a JSON object", "body");
  }
  bool stream = false;
  json::ObjectReader body(*fields->body, "body");
  if (!body.Bool("stream", &stream).ok()) return LineError(line_no, "invalid_body", body.status().message(), "body.stream");
  if (stream) {
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
    StatusOr<Json> request = json::Parse(text, "the line", limits.max_json_depth, limits.max_line_bytes);
    if (!request.ok()) {
      fail(LineError(line_no, "invalid_json_line", request.status().message()));
      continue;
    }
    LineFields fields;
    if (std::optional<BatchError> error = CheckLine(*request, line_no, endpoint, &fields)) {
      fail(std::move(*error));
      continue;
    }
    if (!custom_ids.insert(fields.custom_id).second) {
      fail(LineError(line_no, "duplicate_custom_id", "custom_id '" + fields.custom_id + "' appears more than once", "custom_id"));
      continue;
    }
    parsed.lines.push_back({line_no, std::move(fields.custom_id), std::move(fields.url), json::Dump(*fields.body)});
  }
  if (parsed.lines.empty() && parsed.errors.empty()) fail({"empty_file", "the input file holds no requests", "", std::nullopt});
  if (!parsed.errors.empty()) parsed.lines.clear();
  return parsed;
}

}  // namespace surge::batch
