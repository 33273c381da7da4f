// POST /v1/files, GET /v1/files, GET /v1/files/{id}[/content], DELETE /v1/files/{id}.
#include <nlohmann/json.hpp>

#include "base/json_access.h"
#include "batch/batch_api.h"
#include "batch/batch_json.h"
#include "batch/ids.h"
#include "batch/multipart.h"

namespace surge::batch {
namespace {

constexpr std::string_view kFilesPrefix = "/v1/files/";

struct Upload {
  std::string filename;
  std::string_view bytes;
};

// The multipart fields of an upload: `file` and `purpose` ("batch"), nothing else.
api::ApiResult<Upload> ReadUpload(const BatchApi& api, const net::HttpRequest& request) {
  StatusOr<std::string> boundary = MultipartBoundary(request.headers.Get("Content-Type"));
  if (!boundary.ok()) return api::ApiError{boundary.status(), "", ""};
  StatusOr<std::vector<MultipartPart>> parts = ParseMultipart(request.body, *boundary);
  if (!parts.ok()) return api::ApiError{parts.status(), "", ""};
  std::optional<Upload> upload;
  std::optional<std::string> purpose;
  for (const MultipartPart& part : *parts) {
    if (part.name == "file" && !upload) {
      upload = Upload{part.filename.empty() ? "file" : part.filename, part.data};
    } else if (part.name == "purpose" && !purpose) {
      purpose = std::string(part.data);
    } else {
      return api::InvalidParam(part.name, "unexpected form field '" + part.name.substr(0, 64) +
                                              "' (an upload has one file and one purpose)");
    }
  }
  if (!upload) return api::InvalidParam("file", "the form has no file field");
  if (!purpose) return api::InvalidParam("purpose", "the form has no purpose field");
  if (*purpose != "batch") {
    return api::InvalidParam("purpose", "purpose must be 'batch' (the only purpose this server stores files for)");
  }
  if (upload->bytes.empty()) return api::InvalidParam("file", "the file is empty");
  if (static_cast<int64_t>(upload->bytes.size()) > api.max_file_bytes) {
    return api::ApiError{ResourceExhaustedError("the file is larger than the limit of " +
                                                std::to_string(api.max_file_bytes) + " bytes"),
                         "file", "file_too_large"};
  }
  return *upload;
}


}  // namespace

void HandleUploadFile(BatchApi& api, const net::HttpRequest& request, Writer writer) {
  api::ApiResult<Upload> upload = ReadUpload(api, request);
  if (!upload.ok()) {
    const bool too_large = upload.error().code == "file_too_large";
    if (too_large) return writer->SendJson(413, api::ErrorBody(413, upload.error().status.message(), "file", "file_too_large"));
    return ReplyError(*writer, upload.error());
  }
  FileRecord file{NewId("file-"), static_cast<int64_t>(upload->bytes.size()), UnixNowSeconds(), upload->filename, "batch"};
  if (Status written = api.files.Write(file.id, upload->bytes); !written.ok()) return ReplyStatus(*writer, written);
  if (Status added = api.store.AddFile(file); !added.ok()) {
    (void)api.files.Remove(file.id);
    return ReplyStatus(*writer, added);
  }
  writer->SendJson(200, json::Dump(FileJson(file)));
}

void HandleListFiles(BatchApi& api, const net::HttpRequest& request, Writer writer) {
  auto query = ParseQuery(request.query, {"purpose", "limit", "after", "order"});
  if (!query.ok()) return ReplyError(*writer, query.error());
  if (query->count("order") && query->at("order") != "desc") {
    return ReplyError(*writer, api::InvalidParam("order", "order must be 'desc' (newest first)"));
  }
  api::ApiResult<int64_t> limit = ParseLimit(*query, 10'000, 10'000);
  if (!limit.ok()) return ReplyError(*writer, limit.error());
  const std::string purpose = query->count("purpose") ? query->at("purpose") : "";
  const std::string after = query->count("after") ? query->at("after") : "";
  StatusOr<std::vector<FileRecord>> files = api.store.ListFiles(purpose, after, *limit + 1);
  if (!files.ok()) return ReplyStatus(*writer, files.status());
  writer->SendJson(200, json::Dump(PageJson(*files, *limit, FileJson)));
}

void HandleGetFile(BatchApi& api, const net::HttpRequest& request, Writer writer) {
  std::string_view rest = std::string_view(request.path).substr(kFilesPrefix.size());
  const bool content = rest.ends_with("/content");
  if (content) rest.remove_suffix(std::string_view("/content").size());
  if (!IsSafeId(rest)) return ReplyStatus(*writer, NotFoundError("no file with id '" + std::string(rest.substr(0, 64)) + "'"));
  StatusOr<FileRecord> file = api.store.GetFile(rest);
  if (!file.ok()) return ReplyStatus(*writer, file.status());
  if (!content) return writer->SendJson(200, json::Dump(FileJson(*file)));
  StatusOr<std::string> bytes = api.files.Read(file->id);
  if (!bytes.ok()) return ReplyStatus(*writer, bytes.status());
  writer->Send(200, {{"Content-Type", "application/octet-stream"}}, std::move(bytes).value());
}

void HandleDeleteFile(BatchApi& api, const net::HttpRequest& request, Writer writer) {
  const std::string_view id = std::string_view(request.path).substr(kFilesPrefix.size());
  if (!IsSafeId(id)) return ReplyStatus(*writer, NotFoundError("no file with id '" + std::string(id.substr(0, 64)) + "'"));
  if (Status deleted = api.store.DeleteFile(id); !deleted.ok()) return ReplyStatus(*writer, deleted);
  if (Status removed = api.files.Remove(id); !removed.ok()) return ReplyStatus(*writer, removed);
  writer->SendJson(200, json::Dump(Json{{"id", id}, {"object", "file"}, {"deleted", true}}));
}

}  // namespace surge::batch
