#include "batch/batch_service.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "api/error.h"
#include "base/logging.h"
#include "base/task_runner.h"
#include "batch/batch_api.h"
#include "batch/batch_runner.h"
#include "batch/batch_store.h"
#include "batch/file_store.h"
#include "obs/metrics.h"

namespace surge::batch {
namespace {

// Room for the multipart framing around the largest file.
constexpr size_t kMultipartOverheadBytes = 64 << 10;

struct Route {
  const char* method;
  const char* path;
  void (*handle)(BatchApi&, const net::HttpRequest&, Writer);
};
constexpr Route kRoutes[] = {
    {"POST", "/v1/files", HandleUploadFile},         {"GET", "/v1/files", HandleListFiles},
    {"GET", "/v1/files/*", HandleGetFile},           {"DELETE", "/v1/files/*", HandleDeleteFile},
    {"POST", "/v1/batches", HandleCreateBatch},      {"GET", "/v1/batches", HandleListBatches},
    {"GET", "/v1/batches/*", HandleBatchPath},       {"POST", "/v1/batches/*", HandleBatchPath},
};

// Files on disk with no record: written, then a crash before the record's commit.
Status RemoveOrphanFiles(BatchStore& store, FileStore& files) {
  ASSIGN_OR_RETURN(std::vector<std::string> known, store.FileIds());
  std::sort(known.begin(), known.end());
  for (const std::string& id : files.Ids()) {
    if (!std::binary_search(known.begin(), known.end(), id)) RETURN_IF_ERROR(files.Remove(id));
  }
  return OkStatus();
}

// surge_batch_errors_total{kind} (docs/METRICS.md), once per process; nothing without a registry.
RunnerMetrics RegisterMetrics(obs::Registry* metrics) {
  if (metrics == nullptr) return {};
  obs::CounterFamily& errors = metrics->AddCounterFamily(
      "surge_batch_errors_total",
      "Batch API failures, by kind: invalid_input (a batch whose input failed validation), internal (a batch "
      "whose processing threw: it ended failed), line_internal (an answer that could not be recorded)",
      {"kind"});
  return {&errors.WithLabels({"invalid_input"}), &errors.WithLabels({"internal"}), &errors.WithLabels({"line_internal"})};
}

}  // namespace

BatchService::BatchService(BatchServiceOptions options) : options_(std::move(options)) {}

BatchService::~BatchService() { Stop(); }

StatusOr<std::unique_ptr<BatchService>> BatchService::Open(BatchServiceOptions options) {
  if (options.data_dir.empty()) return InvalidArgumentError("the Batch API needs a data directory");
  if (options.max_file_bytes < 1) return InvalidArgumentError("the file size limit must be > 0");
  if (options.max_in_flight < 1) return InvalidArgumentError("the batch in-flight limit must be >= 1");
  std::unique_ptr<BatchService> service(new BatchService(std::move(options)));
  const std::string& dir = service->options_.data_dir;
  ASSIGN_OR_RETURN(FileStore files, FileStore::Open(dir + "/files"));
  service->files_ = std::make_unique<FileStore>(std::move(files));
  ASSIGN_OR_RETURN(service->store_, BatchStore::Open(dir + "/batch.db"));
  RETURN_IF_ERROR(RemoveOrphanFiles(*service->store_, *service->files_));
  BatchService* self = service.get();
  service->api_.reset(new BatchApi{*service->store_, *service->files_, service->options_.max_file_bytes,
                                   [self] { if (self->runner_) self->runner_->Wake(); }});
  service->worker_ = std::make_unique<TaskRunner>(1);
  service->runner_metrics_ = std::make_unique<RunnerMetrics>(RegisterMetrics(service->options_.metrics));
  return service;
}

void BatchService::Mount(const AddRoute& add) {
  const size_t upload_limit = static_cast<size_t>(options_.max_file_bytes) + kMultipartOverheadBytes;
  for (const Route& route : kRoutes) {
    const bool upload = std::string_view(route.path) == "/v1/files" && std::string_view(route.method) == "POST";
    add(route.method, route.path,
        [api = api_.get(), worker = worker_.get(), handle = route.handle](net::HttpRequest request, Writer writer) {
          auto task = [api, handle, request = std::move(request), writer]() mutable {
            try {
              handle(*api, request, writer);
            } catch (const std::exception& e) {  // the edge: one request fails, the worker goes on
              LOG(ERROR) << "batch: " << request.method << " " << request.path.substr(0, 128) << " threw: " << e.what();
              writer->SendJson(500, api::ErrorBody(500, "internal error"));
            }
          };
          if (!worker->Post(std::move(task))) writer->SendJson(503, api::ErrorBody(503, "the server is shutting down"));
        },
        upload ? upload_limit : 0);
  }
}

void BatchService::StartRunner(const std::string& base_url) {
  RunnerOptions options;
  options.dispatch.base_url = base_url;
  options.dispatch.max_in_flight = options_.max_in_flight;
  options.metrics = *runner_metrics_;
  runner_ = std::make_unique<BatchRunner>(*store_, *files_, std::move(options));
  runner_->Start();
  LOG(INFO) << "batch: runner started, sending to " << base_url << " (data dir " << options_.data_dir << ")";
}

void BatchService::Stop() {
  if (worker_) worker_->Stop();
  if (runner_) runner_->Stop();
}

std::string LoopbackBaseUrl(const std::string& host, uint16_t port) {
  std::string reachable = host;
  if (host.empty() || host == "0.0.0.0") reachable = "127.0.0.1";
  if (host == "::") reachable = "::1";
  if (reachable.find(':') != std::string::npos) reachable = "[" + reachable + "]";
  return "http://" + reachable + ":" + std::to_string(port);
}

void MountBatchApiOff(const AddRoute& add, const std::string& how_to_enable) {
  for (const Route& route : kRoutes) {
    add(route.method, route.path,
        [how_to_enable](net::HttpRequest, Writer writer) {
          writer->SendJson(404, api::ErrorBody(404, "the Batch API is off: " + how_to_enable, "", "batch_api_off"));
        },
        0);
  }
}

}  // namespace surge::batch
