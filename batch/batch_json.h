// The Batch API's JSON: File and Batch objects in OpenAI's shapes (also the form the store
// keeps a batch in), and the lines of a batch's output and error files.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "base/status.h"
#include "batch/batch_types.h"

namespace surge::batch {

using Json = nlohmann::json;

Json FileJson(const FileRecord& file);  // {id, object: "file", bytes, created_at, filename, purpose, status}
Json BatchJson(const BatchRecord& batch);
StatusOr<BatchRecord> BatchFromJson(const Json& json);

// What one request's answer was. `transport` not OK: no HTTP answer came (status_code 0).
struct LineAnswer {
  Status transport;
  int status_code = 0;
  std::string request_id;  // the answer's x-request-id, else one of ours
  std::string body;        // the answer's body as received
};

// The output-file line of a 2xx answer, or the error-file line of anything else, in
// OpenAI's shape: {id: "batch_req_...", custom_id, response: {status_code, request_id,
// body} | null, error: null | {code, message}}. A body that is not JSON is kept as a string.
LineResult MakeLineResult(const BatchLine& line, std::string_view batch_id, const LineAnswer& answer);
// An error-file line for a request that never ran (`code`: "batch_expired", "batch_cancelled").
LineResult MakeUnrunResult(const BatchLine& line, std::string_view batch_id, std::string_view code,
                           std::string_view message);

}  // namespace surge::batch
