// sqlite: the little of SQLite's C API the run store needs, owned and
// checked: a connection, prepared statements with typed binds and
// columns, and transactions. Every failure throws llmgate::error with
// SQLite's message and the file's name.
#pragma once

#include <cstdint>      // std::int64_t
#include <memory>       // std::unique_ptr
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <sqlite3.h>  // sqlite3_*

#include "llmgate/error.hpp"  // llmgate::error, errc

namespace llmgate::inline v0::detail {

class sqlite_database {
 public:
  /// Opens (creating) the database at `path` (":memory:" for one in memory).
  explicit sqlite_database(const std::string& path) : name_(path) {
    sqlite3* handle = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                                   nullptr);
    handle_.reset(handle);  // closed even when the open failed
    if (rc != SQLITE_OK) fail(rc, "cannot open");
    sqlite3_busy_timeout(handle, 5000);
  }

  /// Runs statements that return no rows.
  void execute(const char* sql) {
    char* message = nullptr;
    const int rc = sqlite3_exec(handle_.get(), sql, nullptr, nullptr, &message);
    if (rc != SQLITE_OK) {
      const std::string text = message ? message : sqlite3_errstr(rc);
      sqlite3_free(message);
      throw error(rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT ? errc::invalid_request : errc::io_failure,
                  "run store " + name_ + ": " + text);
    }
  }

  [[noreturn]] void fail(int rc, std::string_view what) const {
    const char* text = handle_ ? sqlite3_errmsg(handle_.get()) : sqlite3_errstr(rc);
    throw error(rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT ? errc::invalid_request : errc::io_failure,
                "run store " + name_ + ": " + std::string(what) + ": " + text);
  }

  sqlite3* handle() const noexcept { return handle_.get(); }

 private:
  struct closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
  };
  std::string name_;
  std::unique_ptr<sqlite3, closer> handle_;
};

/// One prepared statement, bound by position (1-based) and read by column (0-based).
class sqlite_statement {
 public:
  sqlite_statement(sqlite_database& db, std::string_view sql) : db_(&db) {
    sqlite3_stmt* handle = nullptr;
    const int rc = sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &handle, nullptr);
    if (rc != SQLITE_OK) db.fail(rc, "cannot prepare \"" + std::string(sql) + "\"");
    handle_.reset(handle);
  }

  sqlite_statement& bind(int index, std::string_view text) {
    return check(sqlite3_bind_text(handle_.get(), index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
  }
  sqlite_statement& bind(int index, std::int64_t value) { return check(sqlite3_bind_int64(handle_.get(), index, value)); }
  sqlite_statement& bind(int index, double value) { return check(sqlite3_bind_double(handle_.get(), index, value)); }
  sqlite_statement& bind(int index, std::optional<double> value) {
    return value ? bind(index, *value) : check(sqlite3_bind_null(handle_.get(), index));
  }

  /// The next row: true while there is one.
  bool step() {
    const int rc = sqlite3_step(handle_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) db_->fail(rc, "cannot step");
    return false;
  }
  /// Runs a statement that returns no rows, and readies it to run again.
  void run() {
    step();
    reset();
  }
  void reset() {
    sqlite3_reset(handle_.get());
    sqlite3_clear_bindings(handle_.get());
  }

  std::string text(int column) const {
    const auto* bytes = sqlite3_column_text(handle_.get(), column);
    return bytes ? std::string(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(sqlite3_column_bytes(handle_.get(), column)))
                 : std::string();
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(handle_.get(), column); }
  double real(int column) const { return sqlite3_column_double(handle_.get(), column); }
  std::optional<double> optional_real(int column) const {
    if (sqlite3_column_type(handle_.get(), column) == SQLITE_NULL) return std::nullopt;
    return real(column);
  }

 private:
  sqlite_statement& check(int rc) {
    if (rc != SQLITE_OK) db_->fail(rc, "cannot bind");
    return *this;
  }
  struct finalizer {
    void operator()(sqlite3_stmt* statement) const noexcept { sqlite3_finalize(statement); }
  };
  sqlite_database* db_;
  std::unique_ptr<sqlite3_stmt, finalizer> handle_;
};

/// BEGIN IMMEDIATE ... COMMIT, rolled back when left by an exception.
class sqlite_transaction {
 public:
  explicit sqlite_transaction(sqlite_database& db) : db_(&db) { db.execute("BEGIN IMMEDIATE"); }
  sqlite_transaction(const sqlite_transaction&) = delete;
  sqlite_transaction& operator=(const sqlite_transaction&) = delete;
  ~sqlite_transaction() {
    if (db_) sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    db_->execute("COMMIT");
    db_ = nullptr;
  }

 private:
  sqlite_database* db_;
};

}  // namespace llmgate::inline v0::detail
