// POST /v1/batches, GET /v1/batches, GET /v1/batches/{id}, POST /v1/batches/{id}/cancel.
#include <nlohmann/json.hpp>

#include "api/field_reader.h"
#include "base/json_access.h"
#include "base/json_depth.h"
#include "batch/batch_api.h"
#include "batch/batch_input.h"
#include "batch/ids.h"

namespace surge::batch {
namespace {

constexpr std::string_view kBatchesPrefix = "/v1/batches/";
constexpr int64_t kCompletionWindowSeconds = 24 * 3600;

// OpenAI's metadata: at most 16 pairs, keys up to 64 characters, string values up to 512.
std::optional<api::ApiError> CheckMetadata(const api::Json& metadata) {
  auto bad = [](std::string message) { return api::InvalidParam("metadata", std::move(message)); };
  if (!metadata.is_object()) return bad("metadata must be an object of strings");
  if (metadata.size() > 16) return bad("metadata holds at most 16 pairs");
  for (const auto& [key, value] : metadata.items()) {
    if (key.size() > 64) return bad("metadata keys are at most 64 characters");
    if (!value.is_string() || value.get<std::string>().size() > 512) {
      return bad("metadata values are strings of at most 512 characters");
    }
  }
  return std::nullopt;
}

// The body of POST /v1/batches as a new batch (not yet stored); the input file must be an
// upload with purpose "batch".
api::ApiResult<BatchRecord> ReadCreate(BatchApi& api, const std::string& text) {
  if (!JsonDepthWithin(text, 16)) return api::InvalidParam("", "the body nests too deep");
  const api::Json body = api::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return api::InvalidParam("", "the body must be a JSON object");
  api::FieldReader reader(body);
  BatchRecord batch;
  reader.String("input_file_id", &batch.input_file_id);
  reader.Require(!batch.input_file_id.empty(), "input_file_id", "input_file_id is required");
  reader.String("endpoint", &batch.endpoint);
  reader.Require(IsBatchEndpoint(batch.endpoint), "endpoint",
                 "endpoint must be one of /v1/chat/completions, /v1/completions, /v1/embeddings");
  reader.String("completion_window", &batch.completion_window);
  reader.Require(batch.completion_window == "24h", "completion_window", "completion_window must be '24h'");
  reader.Require(!reader.Has("output_expires_after"), "output_expires_after",
                 "output_expires_after is not supported: output files are kept until deleted");
  if (const api::Json* metadata = reader.Find("metadata")) {
    if (std::optional<api::ApiError> error = CheckMetadata(*metadata)) reader.Fail(*error);
    batch.metadata_json = json::Dump(*metadata);
  }
  reader.RefuseUnread({});
  if (reader.failed()) return reader.error();
  StatusOr<FileRecord> input = api.store.GetFile(batch.input_file_id);
  if (!input.ok()) return api::ApiError{input.status(), "input_file_id", ""};
  if (input->purpose != "batch") return api::InvalidParam("input_file_id", "the input file's purpose must be 'batch'");
  return batch;
}

void HandleCancel(BatchApi& api, std::string_view id, Writer writer) {
  const int64_t now = UnixNowSeconds();
  StatusOr<BatchRecord> batch = api.store.UpdateBatch(id, [now](BatchRecord& b) -> Status {
    if (b.status == BatchStatus::kCancelling) return OkStatus();
    if (b.status != BatchStatus::kValidating && b.status != BatchStatus::kInProgress) {
      return {StatusCode::kCancelled, "cannot cancel a batch that is " + std::string(BatchStatusName(b.status))};
    }
    b.status = BatchStatus::kCancelling;
    b.cancelling_at = now;
    return OkStatus();
  });
  if (batch.status().code() == StatusCode::kCancelled) {
    return writer->SendJson(409, api::ErrorBody(409, batch.status().message(), "", "batch_not_cancellable"));
  }
  if (!batch.ok()) return ReplyStatus(*writer, batch.status());
  api.wake_runner();
  writer->SendJson(200, json::Dump(BatchJson(*batch)));
}

}  // namespace

void HandleCreateBatch(BatchApi& api, const net::HttpRequest& request, Writer writer) {
  api::ApiResult<BatchRecord> batch = ReadCreate(api, request.body);
  if (!batch.ok()) return ReplyError(*writer, batch.error());
  batch->id = NewId("batch_");
  batch->created_at = UnixNowSeconds();
  batch->expires_at = batch->created_at + kCompletionWindowSeconds;
  if (Status added = api.store.AddBatch(*batch); !added.ok()) return ReplyStatus(*writer, added);
  api.wake_runner();
  writer->SendJson(200, json::Dump(BatchJson(*batch)));
}

void HandleListBatches(BatchApi& api, const net::HttpRequest& request, Writer writer) {
  auto query = ParseQuery(request.query, {"limit", "after"});
  if (!query.ok()) return ReplyError(*writer, query.error());
  api::ApiResult<int64_t> limit = ParseLimit(*query, 20, 100);
  if (!limit.ok()) return ReplyError(*writer, limit.error());
  const std::string after = query->count("after") ? query->at("after") : "";
  StatusOr<std::vector<BatchRecord>> batches = api.store.ListBatches(after, *limit + 1);
  if (!batches.ok()) return ReplyStatus(*writer, batches.status());
  writer->SendJson(200, json::Dump(PageJson(*batches, *limit, BatchJson)));
}

void HandleBatchPath(BatchApi& api, const net::HttpRequest& request, Writer writer) {
  std::string_view id = std::string_view(request.path).substr(kBatchesPrefix.size());
  const bool cancel = id.ends_with("/cancel");
  if (cancel) id.remove_suffix(std::string_view("/cancel").size());
  if (cancel != (request.method == "POST") || !IsSafeId(id)) {
    return ReplyStatus(*writer, NotFoundError("no route for " + request.method + " " + request.path.substr(0, 128)));
  }
  if (cancel) return HandleCancel(api, id, std::move(writer));
  StatusOr<BatchRecord> batch = api.store.GetBatch(id);
  if (!batch.ok()) return ReplyStatus(*writer, batch.status());
  writer->SendJson(200, json::Dump(BatchJson(*batch)));
}

}  // namespace surge::batch
