// The Batch API's route handlers (files and batches), over one store, one file store and
// the runner's wake-up. Internal to batch/: batch_service.h mounts them. Each handler runs
// on the service's worker thread (SQLite and disk I/O never run on an io thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/error.h"
#include "batch/batch_json.h"
#include "batch/batch_store.h"
#include "batch/file_store.h"
#include "net/http_types.h"
#include "net/response_writer.h"

namespace surge::batch {

struct BatchApi {
  BatchStore& store;
  FileStore& files;
  int64_t max_file_bytes;
  std::function<void()> wake_runner;
};

using Writer = std::shared_ptr<net::ResponseWriter>;

void HandleUploadFile(BatchApi& api, const net::HttpRequest& request, Writer writer);
void HandleListFiles(BatchApi& api, const net::HttpRequest& request, Writer writer);
void HandleGetFile(BatchApi& api, const net::HttpRequest& request, Writer writer);  // also .../content
void HandleDeleteFile(BatchApi& api, const net::HttpRequest& request, Writer writer);
void HandleCreateBatch(BatchApi& api, const net::HttpRequest& request, Writer writer);
void HandleListBatches(BatchApi& api, const net::HttpRequest& request, Writer writer);
void HandleBatchPath(BatchApi& api, const net::HttpRequest& request, Writer writer);  // GET {id}, POST {id}/cancel

// Shared by the handlers.
void ReplyError(net::ResponseWriter& writer, const api::ApiError& error);
void ReplyStatus(net::ResponseWriter& writer, const Status& status);
// "limit=2&after=x" -> {limit: "2", after: "x"}, percent-decoded; a name outside `known`
// is an error naming it (nothing accepted and silently ignored).
api::ApiResult<std::map<std::string, std::string>> ParseQuery(std::string_view query,
                                                              std::initializer_list<std::string_view> known);
// OpenAI's list page, {object: "list", data, first_id, last_id, has_more}, of the first
// `limit` of `rows` (read with limit + 1, so that one more means has_more).
Json ListJson(const std::vector<Json>& data, bool has_more);
template <typename Row, typename ToJson>
Json PageJson(const std::vector<Row>& rows, int64_t limit, ToJson to_json) {
  std::vector<Json> data;
  for (size_t i = 0; i < rows.size() && static_cast<int64_t>(i) < limit; ++i) data.push_back(to_json(rows[i]));
  return ListJson(data, static_cast<int64_t>(rows.size()) > limit);
}
// A `limit` query value in [1, max]; `fallback` when absent.
api::ApiResult<int64_t> ParseLimit(const std::map<std::string, std::string>& query, int64_t fallback, int64_t max);

}  // namespace surge::batch
