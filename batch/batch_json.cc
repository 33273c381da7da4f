#include "batch/batch_json.h"

#include <utility>

#include "batch/ids.h"

namespace surge::batch {
namespace {

// The timestamps of a Batch object, in OpenAI's order, with their fields.
struct TimeField {
  const char* name;
  std::optional<int64_t> BatchRecord::*field;
};
constexpr TimeField kTimes[] = {
    {"in_progress_at", &BatchRecord::in_progress_at}, {"expires_at", &BatchRecord::expires_at},
    {"finalizing_at", &BatchRecord::finalizing_at},   {"completed_at", &BatchRecord::completed_at},
    {"failed_at", &BatchRecord::failed_at},           {"expired_at", &BatchRecord::expired_at},
    {"cancelling_at", &BatchRecord::cancelling_at},   {"cancelled_at", &BatchRecord::cancelled_at},
};

std::string StringOrEmpty(const Json& json, const char* key) {
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Json OrNull(const std::string& id) { return id.empty() ? Json() : Json(id); }
Json OrNull(const std::optional<int64_t>& value) { return value ? Json(*value) : Json(); }

Json ErrorsJson(const std::vector<BatchError>& errors) {
  if (errors.empty()) return Json();
  Json data = Json::array();
  for (const BatchError& e : errors) {
    data.push_back({{"code", e.code}, {"message", e.message}, {"param", e.param.empty() ? Json() : Json(e.param)},
                    {"line", OrNull(e.line)}});
  }
  return {{"object", "list"}, {"data", std::move(data)}};
}

std::vector<BatchError> ErrorsFromJson(const Json& errors) {
  std::vector<BatchError> out;
  if (!errors.is_object()) return out;
  for (const Json& e : errors.value("data", Json::array())) {
    BatchError error{e.value("code", ""), e.value("message", ""), StringOrEmpty(e, "param"), std::nullopt};
    if (e.value("line", Json()).is_number_integer()) error.line = e["line"].get<int64_t>();
    out.push_back(std::move(error));
  }
  return out;
}


// OpenAI's own error code and message from an error body, else what the status says.
std::pair<std::string, std::string> ErrorOf(const LineAnswer& answer, const Json& body) {
  if (!answer.transport.ok()) return {"request_failed", answer.transport.message()};
  const Json* error = body.is_object() && body.contains("error") && body["error"].is_object() ? &body["error"] : nullptr;
  std::string code = error ? StringOrEmpty(*error, "code") : "";
  std::string message = error ? StringOrEmpty(*error, "message") : "";
  if (code.empty()) code = error && !StringOrEmpty(*error, "type").empty() ? StringOrEmpty(*error, "type") : "http_" + std::to_string(answer.status_code);
  if (message.empty()) message = "the request was answered with HTTP " + std::to_string(answer.status_code);
  return {std::move(code), std::move(message)};
}

}  // namespace

Json FileJson(const FileRecord& file) {
  return {{"id", file.id},           {"object", "file"},         {"bytes", file.bytes}, {"created_at", file.created_at},
          {"filename", file.filename}, {"purpose", file.purpose}, {"status", "processed"}};
}

Json BatchJson(const BatchRecord& b) {
  Json json{{"id", b.id},
            {"object", "batch"},
            {"endpoint", b.endpoint},
            {"errors", ErrorsJson(b.errors)},
            {"input_file_id", b.input_file_id},
            {"completion_window", b.completion_window},
            {"status", BatchStatusName(b.status)},
            {"output_file_id", OrNull(b.output_file_id)},
            {"error_file_id", OrNull(b.error_file_id)},
            {"created_at", b.created_at}};
  for (const TimeField& time : kTimes) json[time.name] = OrNull(b.*time.field);
  json["request_counts"] = {{"total", b.request_counts.total},
                            {"completed", b.request_counts.completed},
                            {"failed", b.request_counts.failed}};
  json["metadata"] = Json::parse(b.metadata_json);
  return json;
}

StatusOr<BatchRecord> BatchFromJson(const Json& json) {
  try {
    BatchRecord b;
    b.id = json.at("id").get<std::string>();
    b.endpoint = json.at("endpoint").get<std::string>();
    b.input_file_id = json.at("input_file_id").get<std::string>();
    b.completion_window = json.at("completion_window").get<std::string>();
    ASSIGN_OR_RETURN(b.status, ParseBatchStatus(json.at("status").get<std::string>()));
    b.output_file_id = StringOrEmpty(json, "output_file_id");
    b.error_file_id = StringOrEmpty(json, "error_file_id");
    b.errors = ErrorsFromJson(json.value("errors", Json()));
    b.created_at = json.at("created_at").get<int64_t>();
    for (const TimeField& time : kTimes) {
      if (json.value(time.name, Json()).is_number_integer()) b.*time.field = json[time.name].get<int64_t>();
    }
    const Json& counts = json.at("request_counts");
    b.request_counts = {counts.at("total").get<int64_t>(), counts.at("completed").get<int64_t>(),
                        counts.at("failed").get<int64_t>()};
    b.metadata_json = json.value("metadata", Json()).dump();
    return b;
  } catch (const Json::exception& e) {
    return DataLossError(std::string("a stored batch does not parse: ") + e.what());
  }
}

LineResult MakeLineResult(const BatchLine& line, std::string_view batch_id, const LineAnswer& answer) {
  const bool ok = answer.transport.ok() && answer.status_code >= 200 && answer.status_code < 300;
  Json body = Json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) body = answer.body;
  Json out{{"id", NewId("batch_req_")}, {"custom_id", line.custom_id}};
  out["response"] = answer.transport.ok()
                        ? Json{{"status_code", answer.status_code}, {"request_id", answer.request_id}, {"body", body}}
                        : Json();
  if (ok) {
    out["error"] = nullptr;
  } else {
    auto [code, message] = ErrorOf(answer, body);
    out["error"] = {{"code", code}, {"message", message}};
  }
  return {std::string(batch_id), line.line_no, ok, out.dump()};
}

LineResult MakeUnrunResult(const BatchLine& line, std::string_view batch_id, std::string_view code,
                           std::string_view message) {
  Json out{{"id", NewId("batch_req_")}, {"custom_id", line.custom_id}, {"response", nullptr},
           {"error", {{"code", code}, {"message", message}}}};
  return {std::string(batch_id), line.line_no, false, out.dump()};
}

}  // namespace surge::batch
