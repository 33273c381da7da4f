#include "batch/batch_json.h"

#include <utility>

#include "base/json_access.h"
#include "batch/ids.h"

namespace surge::batch {
namespace {

// An answer nesting deeper than this is kept as text: nothing recursive walks it.
constexpr int kMaxAnswerDepth = 128;

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


// OpenAI's own error code and message from an error body, else what the status says. The
// body is the engine's: each field is read only when it has the type it should.
std::pair<std::string, std::string> ErrorOf(const LineAnswer& answer, const json::Json& body) {
  if (!answer.transport.ok()) return {"request_failed", answer.transport.message()};
  const json::Json* error = nullptr;
  if (body.is_object()) (void)json::ObjectReader(body, "answer").Object("error", &error);
  std::string code, message, type;
  if (error != nullptr) {
    // Each read on its own reader: a field of the wrong type leaves only that one empty.
    (void)json::ObjectReader(*error, "error").String("code", &code);
    (void)json::ObjectReader(*error, "error").String("message", &message);
    (void)json::ObjectReader(*error, "error").String("type", &type);
  }
  if (code.empty()) code = !type.empty() ? type : "http_" + std::to_string(answer.status_code);
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
  StatusOr<json::Json> metadata = json::Parse(b.metadata_json, "metadata", 4);  // checked at create: strings
  json["metadata"] = metadata.ok() ? Json(*metadata) : Json();
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
    b.metadata_json = json::Dump(json.value("metadata", Json()));
    return b;
  } catch (const Json::exception& e) {
    return DataLossError(std::string("a stored batch does not parse: ") + e.what());
  }
}

LineResult MakeLineResult(const BatchLine& line, std::string_view batch_id, const LineAnswer& answer) {
  const bool ok = answer.transport.ok() && answer.status_code >= 200 && answer.status_code < 300;
  // The engine's JSON in its own key order; not JSON, or nesting too deep to walk: its text.
  StatusOr<json::Json> parsed = json::Parse(answer.body, "answer", kMaxAnswerDepth, answer.body.size());
  const json::Json body = parsed.ok() ? std::move(parsed).value() : json::Json(answer.body);
  json::Json out{{"id", NewId("batch_req_")}, {"custom_id", line.custom_id}};
  out["response"] = answer.transport.ok()
                        ? json::Json{{"status_code", answer.status_code}, {"request_id", answer.request_id}, {"body", body}}
                        : json::Json();
  if (ok) {
    out["error"] = nullptr;
  } else {
    auto [code, message] = ErrorOf(answer, body);
    out["error"] = {{"code", code}, {"message", message}};
  }
  return {std::string(batch_id), line.line_no, ok, json::Dump(out)};  // invalid UTF-8 becomes U+FFFD
}

LineResult MakeUnrunResult(const BatchLine& line, std::string_view batch_id, std::string_view code,
                           std::string_view message) {
  Json out{{"id", NewId("batch_req_")}, {"custom_id", line.custom_id}, {"response", nullptr},
           {"error", {{"code", code}, {"message", message}}}};
  return {std::string(batch_id), line.line_no, false, json::Dump(out)};
}

}  // namespace surge::batch
