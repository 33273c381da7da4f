#include "batch/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

namespace surge::batch {
namespace {

Status SqliteError(sqlite3* db, std::string_view what) {
  return InternalError("sqlite: " + std::string(what) + ": " + sqlite3_errmsg(db));
}

}  // namespace

SqliteStatement::~SqliteStatement() {
  if (statement_ != nullptr) sqlite3_finalize(statement_);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), statement_(std::exchange(other.statement_, nullptr)) {}

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(statement_, index, value);
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, std::string_view value) {
  sqlite3_bind_text64(statement_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

StatusOr<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, sqlite3_sql(statement_));
}

Status SqliteStatement::Run() {
  for (;;) {
    StatusOr<bool> row = Step();
    if (row.ok() && *row) continue;
    sqlite3_reset(statement_);  // ready to be bound and run again
    return row.status();
  }
}

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

std::string SqliteStatement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
}

bool SqliteStatement::IsNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<SqliteDb> owned(new SqliteDb(db));  // closes db on every path below
  if (rc != SQLITE_OK) return SqliteError(db, "open " + path);
  sqlite3_busy_timeout(db, 5'000);
  RETURN_IF_ERROR(owned->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"));
  return owned;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Status SqliteDb::Exec(std::string_view sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return OkStatus();
  Status error = InternalError("sqlite: " + std::string(message != nullptr ? message : sqlite3_errstr(rc)));
  sqlite3_free(message);
  return error;
}

StatusOr<SqliteStatement> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr) != SQLITE_OK) {
    return SqliteError(db_, sql);
  }
  return SqliteStatement(db_, statement);
}

Status SqliteDb::InTransaction(const std::function<Status()>& body) {
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status status = body();
  if (status.ok()) status = Exec("COMMIT");
  if (!status.ok()) (void)Exec("ROLLBACK");
  return status;
}

int64_t SqliteDb::num_changes() const { return sqlite3_changes64(db_); }

}  // namespace surge::batch
