// BatchRunner: carries every batch of a BatchStore from validating to a final status on
// one thread. It validates input files, feeds the lines not yet done to a LineDispatcher
// (oldest batch first), commits answers as they come (group commit: whatever arrived
// during the last transaction goes in the next, each result with its line's state),
// and finalizes: the output and error files are written from the committed results, in
// line order, so a line answered again after a crash replaces nothing and repeats nothing.
// Nothing one batch holds can end the thread: whatever its processing throws fails that
// batch (status failed, the error in its `errors`), so a poisoned batch never loops.
// Cancels and expiry (completion_window, 24 h) are handled here too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/periodic_thread.h"
#include "base/status.h"
#include "batch/batch_input.h"
#include "batch/batch_store.h"
#include "batch/file_store.h"
#include "batch/line_dispatcher.h"

namespace surge::obs {
class Counter;
}  // namespace surge::obs

namespace surge::batch {

// What the runner counts: surge_batch_errors_total{kind} (docs/METRICS.md). Null: not counted.
struct RunnerMetrics {
  obs::Counter* invalid_input = nullptr;  // a batch whose input failed validation (it ends failed)
  obs::Counter* internal = nullptr;       // a batch whose processing threw (it ends failed with the error)
  obs::Counter* line_internal = nullptr;  // an answer that could not be recorded (an error line instead)
};

struct RunnerOptions {
  DispatchOptions dispatch;
  RunnerMetrics metrics;
  BatchInputLimits input_limits;
  int64_t tick_ms = 20;  // longest wait between two passes (answers wake it sooner)
  std::function<int64_t()> now_s;  // Unix seconds; unset: the system clock
};

class BatchRunner {
 public:
  // `store` and `files` are borrowed and outlive the runner.
  BatchRunner(BatchStore& store, FileStore& files, RunnerOptions options);
  ~BatchRunner();  // Stop()
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  void Start();
  // A batch was created or cancelled: look now rather than at the next tick.
  void Wake();
  // Stops sending, commits what has come back, joins. Lines still in flight stay pending
  // in the store and run again on the next start. Idempotent.
  void Stop();

  int window_limit() const { return dispatcher_.window_limit(); }

 private:
  // Where the runner is in one batch's pending lines (runner thread only).
  struct Cursor {
    int64_t last_line_no = 0;  // lines up to here were handed to the dispatcher
    bool exhausted = false;    // the store had no pending line after last_line_no
  };
  void Pass();
  Status CommitAnswers();
  // Advance, with whatever it throws ending that batch failed (the runner goes on).
  Status AdvanceOrFail(const BatchRecord& batch);
  Status Advance(const BatchRecord& batch);
  Status FailBatch(const BatchRecord& batch, const std::string& message);
  void OnAnswer(const DispatchedLine& line, const LineAnswer& answer);
  Status Validate(const BatchRecord& batch);
  Status FeedLines(const BatchRecord& batch);
  Status ExpireLines(const BatchRecord& batch);
  Status Finalize(const BatchRecord& batch, BatchStatus final_status);
  StatusOr<std::string> WriteResultFile(const BatchRecord& batch, bool ok, std::vector<FileRecord>* files);
  int64_t Now() const;

  BatchStore& store_;
  FileStore& files_;
  const RunnerOptions options_;
  std::mutex mu_;
  std::vector<LineResult> answered_;  // guarded by mu_: answers not yet committed
  std::map<std::string, Cursor> cursors_;  // batch id -> cursor; runner thread only
  LineDispatcher dispatcher_;  // after what its callback touches
  PeriodicThread thread_;  // a Pass every tick, or at once when woken or answered
};

}  // namespace surge::batch
