// SqliteDb: a small RAII face of one SQLite connection (WAL, full sync), prepared
// statements with bound values, and transactions that commit whole or not at all.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace surge::batch {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  SqliteStatement& operator=(SqliteStatement&&) = delete;

  // 1-based parameter indices, as SQLite numbers them. The text is copied.
  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& Bind(int index, std::string_view value);
  // The next row (true), the end (false), or the error.
  StatusOr<bool> Step();
  // Steps to the end and resets (so it can be bound and run again): for statements
  // that return no rows.
  Status Run();
  // Columns of the current row, 0-based.
  int64_t Int(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_;
};

class SqliteDb {
 public:
  // Creates the file when absent. WAL journal with synchronous=FULL: a committed
  // transaction survives a process kill and a power cut.
  static StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  Status Exec(std::string_view sql);  // one or more statements, no rows
  StatusOr<SqliteStatement> Prepare(std::string_view sql);
  // BEGIN IMMEDIATE, `body`, then COMMIT when it returns OK, else ROLLBACK.
  Status InTransaction(const std::function<Status()>& body);
  int64_t num_changes() const;  // rows the last statement changed

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace surge::batch
