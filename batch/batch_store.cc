#include "batch/batch_store.h"

#include <map>
#include <utility>

#include "base/json_access.h"
#include "batch/batch_json.h"

namespace surge::batch {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS files(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL, filename TEXT NOT NULL, purpose TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batches(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, status TEXT NOT NULL, object TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lines(
  batch_id TEXT NOT NULL, line_no INTEGER NOT NULL, custom_id TEXT NOT NULL, url TEXT NOT NULL,
  body TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0, ok INTEGER, result TEXT,
  PRIMARY KEY(batch_id, line_no)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS batches_by_status ON batches(status, seq);
)sql";

FileRecord ReadFile(const SqliteStatement& row) {
  return {row.Text(0), row.Int(1), row.Int(2), row.Text(3), row.Text(4)};
}

}  // namespace

StatusOr<std::unique_ptr<BatchStore>> BatchStore::Open(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path));
  RETURN_IF_ERROR(db->Exec(kSchema));
  return std::unique_ptr<BatchStore>(new BatchStore(std::move(db)));
}

Status BatchStore::InsertFileLocked(const FileRecord& file) {
  ASSIGN_OR_RETURN(SqliteStatement insert,
                   db_->Prepare("INSERT INTO files(id, bytes, created_at, filename, purpose) VALUES(?, ?, ?, ?, ?)"));
  return insert.Bind(1, file.id).Bind(2, file.bytes).Bind(3, file.created_at).Bind(4, file.filename).Bind(5, file.purpose).Run();
}

Status BatchStore::AddFile(const FileRecord& file) {
  std::lock_guard<std::mutex> lock(mu_);
  return InsertFileLocked(file);
}

StatusOr<FileRecord> BatchStore::GetFile(std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(SqliteStatement select,
                   db_->Prepare("SELECT id, bytes, created_at, filename, purpose FROM files WHERE id = ?"));
  ASSIGN_OR_RETURN(bool found, select.Bind(1, id).Step());
  if (!found) return NotFoundError("no file with id '" + std::string(id) + "'");
  return ReadFile(select);
}

Status BatchStore::DeleteFile(std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(SqliteStatement remove, db_->Prepare("DELETE FROM files WHERE id = ?"));
  RETURN_IF_ERROR(remove.Bind(1, id).Run());
  if (db_->num_changes() == 0) return NotFoundError("no file with id '" + std::string(id) + "'");
  return OkStatus();
}

StatusOr<std::vector<FileRecord>> BatchStore::ListFiles(std::string_view purpose, std::string_view after, int64_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(SqliteStatement select,
                   db_->Prepare("SELECT id, bytes, created_at, filename, purpose FROM files "
                                "WHERE (?1 = '' OR purpose = ?1) AND (?2 = '' OR seq < (SELECT seq FROM files WHERE id = ?2)) "
                                "ORDER BY seq DESC LIMIT ?3"));
  select.Bind(1, purpose).Bind(2, after).Bind(3, limit);
  std::vector<FileRecord> files;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) return files;
    files.push_back(ReadFile(select));
  }
}

StatusOr<std::vector<std::string>> BatchStore::FileIds() {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(SqliteStatement select, db_->Prepare("SELECT id FROM files"));
  std::vector<std::string> ids;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) return ids;
    ids.push_back(select.Text(0));
  }
}

Status BatchStore::AddBatch(const BatchRecord& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(SqliteStatement insert, db_->Prepare("INSERT INTO batches(id, status, object) VALUES(?, ?, ?)"));
  return insert.Bind(1, batch.id).Bind(2, BatchStatusName(batch.status)).Bind(3, json::Dump(BatchJson(batch))).Run();
}

StatusOr<BatchRecord> BatchStore::GetBatch(std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  return GetBatchLocked(id);
}

StatusOr<BatchRecord> BatchStore::GetBatchLocked(std::string_view id) {
  ASSIGN_OR_RETURN(SqliteStatement select, db_->Prepare("SELECT object FROM batches WHERE id = ?"));
  ASSIGN_OR_RETURN(bool found, select.Bind(1, id).Step());
  if (!found) return NotFoundError("no batch with id '" + std::string(id) + "'");
  return BatchFromJson(Json::parse(select.Text(0), nullptr, /*allow_exceptions=*/false));
}

StatusOr<std::vector<BatchRecord>> BatchStore::ReadBatches(SqliteStatement& statement) {
  std::vector<BatchRecord> batches;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, statement.Step());
    if (!row) return batches;
    ASSIGN_OR_RETURN(BatchRecord batch, BatchFromJson(Json::parse(statement.Text(0), nullptr, /*allow_exceptions=*/false)));
    batches.push_back(std::move(batch));
  }
}

StatusOr<std::vector<BatchRecord>> BatchStore::ListBatches(std::string_view after, int64_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(SqliteStatement select,
                   db_->Prepare("SELECT object FROM batches WHERE (?1 = '' OR seq < (SELECT seq FROM batches WHERE id = ?1)) "
                                "ORDER BY seq DESC LIMIT ?2"));
  select.Bind(1, after).Bind(2, limit);
  return ReadBatches(select);
}

StatusOr<std::vector<BatchRecord>> BatchStore::BatchesWithStatus(std::vector<BatchStatus> statuses) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string placeholders;
  for (size_t i = 0; i < statuses.size(); ++i) placeholders += i == 0 ? "?" : ", ?";
  ASSIGN_OR_RETURN(SqliteStatement select,
                   db_->Prepare("SELECT object FROM batches WHERE status IN (" + placeholders + ") ORDER BY seq"));
  for (size_t i = 0; i < statuses.size(); ++i) select.Bind(static_cast<int>(i + 1), BatchStatusName(statuses[i]));
  return ReadBatches(select);
}

StatusOr<BatchRecord> BatchStore::ChangeBatchLocked(std::string_view id, const BatchChange& change) {
  ASSIGN_OR_RETURN(BatchRecord batch, GetBatchLocked(id));
  RETURN_IF_ERROR(change(batch));
  ASSIGN_OR_RETURN(SqliteStatement update, db_->Prepare("UPDATE batches SET status = ?, object = ? WHERE id = ?"));
  RETURN_IF_ERROR(update.Bind(1, BatchStatusName(batch.status)).Bind(2, json::Dump(BatchJson(batch))).Bind(3, id).Run());
  return batch;
}

StatusOr<BatchRecord> BatchStore::ChangeAfter(std::string_view id, const std::function<Status()>& first,
                                               const BatchChange& change) {
  std::lock_guard<std::mutex> lock(mu_);
  BatchRecord changed;
  RETURN_IF_ERROR(db_->InTransaction([&]() -> Status {
    RETURN_IF_ERROR(first());
    ASSIGN_OR_RETURN(changed, ChangeBatchLocked(id, change));
    return OkStatus();
  }));
  return changed;
}

StatusOr<BatchRecord> BatchStore::UpdateBatch(std::string_view id, const BatchChange& change) {
  return ChangeAfter(id, [] { return OkStatus(); }, change);
}

StatusOr<BatchRecord> BatchStore::AddLines(std::string_view id, const std::vector<BatchLine>& lines,
                                           const BatchChange& change) {
  auto insert_lines = [&]() -> Status {
    ASSIGN_OR_RETURN(SqliteStatement insert,
                     db_->Prepare("INSERT INTO lines(batch_id, line_no, custom_id, url, body) VALUES(?, ?, ?, ?, ?)"));
    for (const BatchLine& line : lines) {
      RETURN_IF_ERROR(insert.Bind(1, id).Bind(2, line.line_no).Bind(3, line.custom_id).Bind(4, line.url).Bind(5, line.body).Run());
    }
    return OkStatus();
  };
  return ChangeAfter(id, insert_lines, change);
}

StatusOr<BatchRecord> BatchStore::FinishBatch(std::string_view id, const std::vector<FileRecord>& files,
                                              const BatchChange& change) {
  auto insert_files = [&]() -> Status {
    for (const FileRecord& file : files) RETURN_IF_ERROR(InsertFileLocked(file));
    return OkStatus();
  };
  return ChangeAfter(id, insert_files, change);
}

StatusOr<std::vector<BatchLine>> BatchStore::PendingLines(std::string_view batch_id, int64_t after_line_no,
                                                          int64_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(SqliteStatement select,
                   db_->Prepare("SELECT line_no, custom_id, url, body FROM lines "
                                "WHERE batch_id = ? AND done = 0 AND line_no > ? ORDER BY line_no LIMIT ?"));
  select.Bind(1, batch_id).Bind(2, after_line_no).Bind(3, limit);
  std::vector<BatchLine> lines;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) return lines;
    lines.push_back({select.Int(0), select.Text(1), select.Text(2), select.Text(3)});
  }
}

StatusOr<int64_t> BatchStore::NumPendingLines(std::string_view batch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(SqliteStatement count, db_->Prepare("SELECT COUNT(*) FROM lines WHERE batch_id = ? AND done = 0"));
  ASSIGN_OR_RETURN(bool row, count.Bind(1, batch_id).Step());
  return row ? count.Int(0) : 0;
}

StatusOr<int64_t> BatchStore::CommitResults(const std::vector<LineResult>& results) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t num_new = 0;
  RETURN_IF_ERROR(db_->InTransaction([&]() -> Status {
    ASSIGN_OR_RETURN(SqliteStatement update,
                     db_->Prepare("UPDATE lines SET done = 1, ok = ?, result = ? WHERE batch_id = ? AND line_no = ? AND done = 0"));
    std::map<std::string, RequestCounts> added;  // batch id -> new results
    for (const LineResult& r : results) {
      RETURN_IF_ERROR(update.Bind(1, r.ok ? 1 : 0).Bind(2, r.output_line).Bind(3, r.batch_id).Bind(4, r.line_no).Run());
      if (db_->num_changes() == 0) continue;  // done before: its first result stands
      ++num_new;
      ++(r.ok ? added[r.batch_id].completed : added[r.batch_id].failed);
    }
    for (const auto& entry : added) {  // not a structured binding: clang 14 cannot capture one
      const RequestCounts& counts = entry.second;
      auto add = [&counts](BatchRecord& batch) {
        batch.request_counts.completed += counts.completed;
        batch.request_counts.failed += counts.failed;
        return OkStatus();
      };
      RETURN_IF_ERROR(ChangeBatchLocked(entry.first, add).status());
    }
    return OkStatus();
  }));
  return num_new;
}

Status BatchStore::ForEachResult(std::string_view batch_id, bool ok, const std::function<void(std::string_view)>& visit) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(SqliteStatement select,
                   db_->Prepare("SELECT result FROM lines WHERE batch_id = ? AND done = 1 AND ok = ? ORDER BY line_no"));
  select.Bind(1, batch_id).Bind(2, ok ? 1 : 0);
  for (;;) {
    ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) return OkStatus();
    visit(select.Text(0));
  }
}

}  // namespace surge::batch
