// BatchService: the OpenAI Batch API as one object to mount on an HTTP server — surge
// route mounts it on its gateway, surge serve on its own server — with its durable store
// (DATA_DIR/batch.db, DATA_DIR/files/) and the runner that sends the lines, at batch tier,
// to the server's own address.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "net/http_server.h"

namespace surge {
class TaskRunner;
}  // namespace surge

namespace surge::obs {
class Registry;
}  // namespace surge::obs

namespace surge::batch {

class BatchRunner;
struct RunnerMetrics;
class BatchStore;
class FileStore;
struct BatchApi;

struct BatchServiceOptions {
  std::string data_dir;
  int64_t max_file_bytes = 200 << 20;  // OpenAI's limit for a batch input file
  int max_in_flight = 64;              // the runner's window never grows past it
  obs::Registry* metrics = nullptr;    // the process's registry (surge_batch_errors_total); null: none
};

// How a server lets others add routes before it starts: (method, path, handler, body limit
// in bytes or 0 for the server's own).
using AddRoute = std::function<void(std::string method, std::string path, net::Handler handler, size_t max_body_bytes)>;

class BatchService {
 public:
  // Opens (or creates) the store; files on disk that no record names (a crash between a
  // write and its record) are removed.
  static StatusOr<std::unique_ptr<BatchService>> Open(BatchServiceOptions options);
  ~BatchService();  // Stop()

  // /v1/files and /v1/batches with their sub-paths. Before the server starts.
  void Mount(const AddRoute& add);
  // Once the server listens: the runner sends lines to `base_url` (e.g. the server's own
  // "http://127.0.0.1:PORT"), and picks up the batches a previous run left unfinished.
  void StartRunner(const std::string& base_url);
  // The runner stops (lines in flight stay pending), then the routes' worker. Idempotent.
  void Stop();

 private:
  explicit BatchService(BatchServiceOptions options);

  const BatchServiceOptions options_;
  std::unique_ptr<RunnerMetrics> runner_metrics_;  // the counters of options_.metrics
  std::unique_ptr<BatchStore> store_;
  std::unique_ptr<FileStore> files_;
  std::unique_ptr<BatchRunner> runner_;  // null until StartRunner
  std::unique_ptr<BatchApi> api_;
  std::unique_ptr<TaskRunner> worker_;   // runs the handlers
};

// "http://127.0.0.1:PORT" for a server listening on `host` (a wildcard 0.0.0.0 / :: is
// reached through loopback; an IPv6 literal gets brackets): where the runner sends lines.
std::string LoopbackBaseUrl(const std::string& host, uint16_t port);

// The same routes answering 404 with `how_to_enable` ("start surge route with --data-dir
// DIR"), so that a server without a data dir says why instead of "no route".
void MountBatchApiOff(const AddRoute& add, const std::string& how_to_enable);

}  // namespace surge::batch
