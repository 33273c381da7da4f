// BatchStore: the Batch API's durable state in one SQLite database (WAL): file metadata,
// batches (each kept as its OpenAI JSON object) and their lines, each line with its state
// and, once done, its result. A line's result and its "done" commit in one transaction,
// so after a crash a line is either done with its result or still pending: never lost,
// never answered twice. Thread-safe (one connection behind one mutex).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "batch/batch_types.h"
#include "batch/sqlite_db.h"

namespace surge::batch {

class BatchStore {
 public:
  static StatusOr<std::unique_ptr<BatchStore>> Open(const std::string& path);

  // Files (metadata only: the bytes live in a FileStore).
  Status AddFile(const FileRecord& file);
  StatusOr<FileRecord> GetFile(std::string_view id);  // NOT_FOUND
  Status DeleteFile(std::string_view id);             // NOT_FOUND
  // Newest first; `after` (an id, "" for the start) is exclusive. `purpose` "" for all.
  StatusOr<std::vector<FileRecord>> ListFiles(std::string_view purpose, std::string_view after, int64_t limit);
  StatusOr<std::vector<std::string>> FileIds();

  // Batches.
  Status AddBatch(const BatchRecord& batch);
  StatusOr<BatchRecord> GetBatch(std::string_view id);  // NOT_FOUND
  // Newest first, after the batch `after` ("" for the start), at most `limit`.
  StatusOr<std::vector<BatchRecord>> ListBatches(std::string_view after, int64_t limit);
  // Oldest first: the order batches run in.
  StatusOr<std::vector<BatchRecord>> BatchesWithStatus(std::vector<BatchStatus> statuses);
  // Reads the batch, lets `change` edit it and writes it back, in one transaction (so a
  // cancel and the runner's counts never overwrite each other). `change` may refuse with
  // an error, which is returned and changes nothing. Returns the batch as written.
  using BatchChange = std::function<Status(BatchRecord&)>;
  StatusOr<BatchRecord> UpdateBatch(std::string_view id, const BatchChange& change);
  // Validation done: the lines and the batch's change in one transaction.
  StatusOr<BatchRecord> AddLines(std::string_view id, const std::vector<BatchLine>& lines, const BatchChange& change);
  // Finalization: the output files' metadata and the batch's change in one transaction.
  StatusOr<BatchRecord> FinishBatch(std::string_view id, const std::vector<FileRecord>& files, const BatchChange& change);

  // Lines not done yet with line_no > after_line_no, in order, at most `limit`.
  StatusOr<std::vector<BatchLine>> PendingLines(std::string_view batch_id, int64_t after_line_no, int64_t limit);
  StatusOr<int64_t> NumPendingLines(std::string_view batch_id);
  // Each result with its line's "done" and its batch's request_counts, all in one
  // transaction. A line that is already done keeps its first result (and counts once).
  // Returns how many results were new.
  StatusOr<int64_t> CommitResults(const std::vector<LineResult>& results);
  // The committed results of one kind (ok: the output file's, else the error file's), by line.
  Status ForEachResult(std::string_view batch_id, bool ok, const std::function<void(std::string_view line)>& visit);

 private:
  explicit BatchStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  StatusOr<BatchRecord> GetBatchLocked(std::string_view id);
  StatusOr<BatchRecord> ChangeBatchLocked(std::string_view id, const BatchChange& change);
  // `first` (more writes), then `change`, in one transaction under the lock.
  StatusOr<BatchRecord> ChangeAfter(std::string_view id, const std::function<Status()>& first, const BatchChange& change);
  Status InsertFileLocked(const FileRecord& file);
  StatusOr<std::vector<BatchRecord>> ReadBatches(SqliteStatement& statement);

  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;  // guarded by mu_
};

}  // namespace surge::batch
