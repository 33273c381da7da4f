#include "batch/batch_runner.h"

#include <utility>

#include "base/logging.h"
#include "batch/batch_json.h"
#include "batch/ids.h"
#include "obs/metrics.h"

namespace surge::batch {
namespace {

// Lines read from the store per refill, and how many may wait in the dispatcher's queue
// per in-flight slot before the next refill: enough that the window never runs dry.
constexpr int64_t kLinesPerRead = 256;
constexpr int64_t kQueuedPerSlot = 2;

void Count(obs::Counter* counter) {
  if (counter != nullptr) counter->Increment();
}

}  // namespace

BatchRunner::BatchRunner(BatchStore& store, FileStore& files, RunnerOptions options)
    : store_(store),
      files_(files),
      options_(std::move(options)),
      dispatcher_(options_.dispatch, [this](const DispatchedLine& line, const LineAnswer& answer) { OnAnswer(line, answer); }) {}

// On the dispatcher's thread: an answer that cannot be made into its output line (it should
// not happen: MakeLineResult reads the body through json_access) becomes an error line.
void BatchRunner::OnAnswer(const DispatchedLine& line, const LineAnswer& answer) {
  LineResult result;
  try {
    result = MakeLineResult(line.line, line.owner, answer);
  } catch (const std::exception& e) {
    LOG(ERROR) << "batch " << line.owner << " line " << line.line.line_no << ": " << e.what();
    Count(options_.metrics.line_internal);
    result = MakeUnrunResult(line.line, line.owner, "internal_error", std::string("the answer could not be recorded: ") + e.what());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    answered_.push_back(std::move(result));
  }
  thread_.Wake();
}

BatchRunner::~BatchRunner() { Stop(); }

void BatchRunner::Start() {
  const PeriodicThread::Duration tick = std::chrono::milliseconds(options_.tick_ms);
  thread_.Start(
      tick,
      [this] {
        try {
          Pass();
        } catch (const std::exception& e) {  // outside any one batch (AdvanceOrFail catches those)
          Count(options_.metrics.internal);
          LOG(ERROR) << "batch: a pass threw: " << e.what();
        }
      },
      tick);
}

void BatchRunner::Wake() { thread_.Wake(); }

void BatchRunner::Stop() {
  if (thread_.stopping()) return;
  thread_.Stop();
  dispatcher_.Stop();
  if (Status status = CommitAnswers(); !status.ok()) {
    LOG(ERROR) << "batch: last commit: " << status.message();
  }
}

int64_t BatchRunner::Now() const { return options_.now_s ? options_.now_s() : UnixNowSeconds(); }

void BatchRunner::Pass() {
  if (Status status = CommitAnswers(); !status.ok()) {
    LOG(ERROR) << "batch: commit: " << status.message();
  }
  StatusOr<std::vector<BatchRecord>> active = store_.BatchesWithStatus(
      {BatchStatus::kValidating, BatchStatus::kInProgress, BatchStatus::kFinalizing, BatchStatus::kCancelling});
  if (!active.ok()) {
    LOG(ERROR) << "batch: " << active.status().message();
    return;
  }
  for (const BatchRecord& batch : *active) {
    if (Status status = AdvanceOrFail(batch); !status.ok()) {
      LOG(ERROR) << "batch " << batch.id << ": " << status.message();
    }
  }
}

Status BatchRunner::CommitAnswers() {
  std::vector<LineResult> results;
  {
    std::lock_guard<std::mutex> lock(mu_);
    results.swap(answered_);
  }
  if (results.empty()) return OkStatus();
  StatusOr<int64_t> committed = store_.CommitResults(results);
  if (committed.ok()) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);  // kept for the next pass: an answer is never dropped
  answered_.insert(answered_.begin(), std::make_move_iterator(results.begin()), std::make_move_iterator(results.end()));
  return committed.status();
}

Status BatchRunner::AdvanceOrFail(const BatchRecord& batch) {
  try {
    return Advance(batch);
  } catch (const std::exception& e) {
    Count(options_.metrics.internal);
    return FailBatch(batch, std::string("processing the batch threw: ") + e.what());
  }
}

// Ends `batch` failed with `message` as its one error: its queued lines are dropped, and
// answers still in flight commit to it harmlessly. A failure here is logged, and the next
// pass tries again.
Status BatchRunner::FailBatch(const BatchRecord& batch, const std::string& message) {
  LOG(ERROR) << "batch " << batch.id << " failed: " << message;
  try {
    dispatcher_.DropQueued(batch.id);
    const int64_t now = Now();
    StatusOr<BatchRecord> failed = store_.UpdateBatch(batch.id, [&](BatchRecord& b) {
      b.status = BatchStatus::kFailed;
      b.failed_at = now;
      b.errors = {{"internal_error", message, "", std::nullopt}};
      return OkStatus();
    });
    cursors_.erase(batch.id);
    return failed.status();
  } catch (const std::exception& e) {
    return InternalError(std::string("failing the batch threw: ") + e.what());
  }
}

Status BatchRunner::Advance(const BatchRecord& batch) {
  switch (batch.status) {
    case BatchStatus::kValidating:
      return Validate(batch);
    case BatchStatus::kFinalizing:
      return Finalize(batch, BatchStatus::kCompleted);
    case BatchStatus::kCancelling:
      dispatcher_.DropQueued(batch.id);
      return dispatcher_.NumOutstanding(batch.id) == 0 ? Finalize(batch, BatchStatus::kCancelled) : OkStatus();
    case BatchStatus::kInProgress:
      if (batch.expires_at && Now() >= *batch.expires_at) {
        dispatcher_.DropQueued(batch.id);
        if (dispatcher_.NumOutstanding(batch.id) > 0) return OkStatus();
        RETURN_IF_ERROR(ExpireLines(batch));
        return Finalize(batch, BatchStatus::kExpired);
      }
      return FeedLines(batch);
    default:
      return OkStatus();
  }
}

Status BatchRunner::Validate(const BatchRecord& batch) {
  std::vector<BatchError> errors;
  ParsedBatchInput parsed;
  StatusOr<std::string> content = files_.Read(batch.input_file_id);
  if (content.ok()) {
    parsed = ParseBatchInput(*content, batch.endpoint, options_.input_limits);
    errors = std::move(parsed.errors);
  } else {
    errors.push_back({"file_not_found", "the input file " + batch.input_file_id + " is gone", "input_file_id", std::nullopt});
  }
  if (!errors.empty()) Count(options_.metrics.invalid_input);
  const int64_t now = Now();
  const int64_t num_lines = static_cast<int64_t>(parsed.lines.size());
  auto decide = [&](BatchRecord& b) -> Status {
    if (b.status != BatchStatus::kValidating) return OkStatus();  // cancelled meanwhile: the next pass sees it
    if (!errors.empty()) {
      b.status = BatchStatus::kFailed;
      b.failed_at = now;
      b.errors = errors;
    } else {
      b.status = BatchStatus::kInProgress;
      b.in_progress_at = now;
      b.request_counts.total = num_lines;
    }
    return OkStatus();
  };
  if (!errors.empty()) return store_.UpdateBatch(batch.id, decide).status();
  // Lines are only inserted while the batch is still validating (else the change refuses).
  auto start = [&](BatchRecord& b) -> Status {
    if (b.status != BatchStatus::kValidating) return Status(StatusCode::kCancelled, "no longer validating");
    return decide(b);
  };
  StatusOr<BatchRecord> started = store_.AddLines(batch.id, parsed.lines, start);
  if (started.status().code() == StatusCode::kCancelled) return OkStatus();
  return started.status();
}

Status BatchRunner::FeedLines(const BatchRecord& batch) {
  Cursor& cursor = cursors_[batch.id];
  if (!cursor.exhausted && dispatcher_.NumQueued(batch.id) < kQueuedPerSlot * options_.dispatch.max_in_flight) {
    ASSIGN_OR_RETURN(std::vector<BatchLine> lines, store_.PendingLines(batch.id, cursor.last_line_no, kLinesPerRead));
    if (lines.empty()) {
      cursor.exhausted = true;
    } else {
      cursor.last_line_no = lines.back().line_no;
      std::vector<DispatchedLine> dispatched;
      for (BatchLine& line : lines) dispatched.push_back({batch.id, std::move(line)});
      dispatcher_.Enqueue(std::move(dispatched));
    }
  }
  if (!cursor.exhausted || dispatcher_.NumOutstanding(batch.id) > 0) return OkStatus();
  RETURN_IF_ERROR(CommitAnswers());  // nothing outstanding: every answer is in answered_
  ASSIGN_OR_RETURN(int64_t num_pending, store_.NumPendingLines(batch.id));
  if (num_pending == 0) return Finalize(batch, BatchStatus::kCompleted);
  cursor = Cursor{};  // a line the dispatcher no longer holds and the store never got: read again
  return OkStatus();
}

Status BatchRunner::ExpireLines(const BatchRecord& batch) {
  RETURN_IF_ERROR(CommitAnswers());
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<BatchLine> lines, store_.PendingLines(batch.id, 0, kLinesPerRead));
    if (lines.empty()) return OkStatus();
    std::vector<LineResult> results;
    for (const BatchLine& line : lines) {
      results.push_back(MakeUnrunResult(line, batch.id, "batch_expired",
                                        "the batch's completion_window passed before this request ran"));
    }
    RETURN_IF_ERROR(store_.CommitResults(results).status());
  }
}

StatusOr<std::string> BatchRunner::WriteResultFile(const BatchRecord& batch, bool ok, std::vector<FileRecord>* files) {
  std::string content;
  RETURN_IF_ERROR(store_.ForEachResult(batch.id, ok, [&content](std::string_view line) {
    content += line;
    content += '\n';
  }));
  if (content.empty()) return std::string();
  FileRecord file{NewId("file-"), static_cast<int64_t>(content.size()), Now(),
                  batch.id + (ok ? "_output.jsonl" : "_error.jsonl"), "batch_output"};
  RETURN_IF_ERROR(files_.Write(file.id, content));
  files->push_back(file);
  return file.id;
}

Status BatchRunner::Finalize(const BatchRecord& batch, BatchStatus final_status) {
  RETURN_IF_ERROR(CommitAnswers());
  if (final_status == BatchStatus::kCompleted && batch.status != BatchStatus::kFinalizing) {
    RETURN_IF_ERROR(store_.UpdateBatch(batch.id, [this](BatchRecord& b) {
      b.status = BatchStatus::kFinalizing;
      b.finalizing_at = Now();
      return OkStatus();
    }).status());
  }
  // A crash from here to FinishBatch leaves files no record names; Open removes them.
  std::vector<FileRecord> new_files;
  ASSIGN_OR_RETURN(std::string output_file_id, WriteResultFile(batch, true, &new_files));
  ASSIGN_OR_RETURN(std::string error_file_id, WriteResultFile(batch, false, &new_files));
  const int64_t now = Now();
  auto finish = [&](BatchRecord& b) {
    b.status = final_status;
    b.output_file_id = output_file_id;
    b.error_file_id = error_file_id;
    if (final_status == BatchStatus::kCompleted) b.completed_at = now;
    if (final_status == BatchStatus::kCancelled) b.cancelled_at = now;
    if (final_status == BatchStatus::kExpired) b.expired_at = now;
    return OkStatus();
  };
  RETURN_IF_ERROR(store_.FinishBatch(batch.id, new_files, finish).status());
  cursors_.erase(batch.id);
  LOG(INFO) << "batch " << batch.id << " " << BatchStatusName(final_status);
  return OkStatus();
}

}  // namespace surge::batch
