// run_store: everything an evaluation run learns, in one SQLite file, so
// that a run stopped or killed at any point resumes where it stopped.
//
// A request is planned (pending), marked in flight and committed before it
// is sent (begin), and recorded with what came back (finish). A resumed run
// sends only what is not recorded: a request still in flight was cut off by
// the kill and is sent again, its attempt count saying so. Scores, ratings
// and rating assignments are written as they are given.
//
// The file is in WAL mode with synchronous=NORMAL: a commit survives the
// process being killed (it is in the operating system's hands once
// written); a power loss may take the last commits back, never corrupt the
// file. Every method is thread-safe.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t
#include <filesystem>   // std::filesystem::path
#include <mutex>        // std::mutex, std::scoped_lock
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/error.hpp"                 // llmgate::error, errc
#include "llmgate/eval/detail/sqlite.hpp"    // sqlite_database, sqlite_statement, sqlite_transaction
#include "llmgate/eval/run/run_records.hpp"  // planned_request, request_result, score_record...

namespace llmgate::inline v0 {

class run_store {
 public:
  /// Opens the store at `path`, creating it. A file that is not a run store
  /// (not SQLite, or another program's database) is refused naming it.
  explicit run_store(const std::filesystem::path& path) : db_(path.string()) { open(path.string()); }

  /// A store that lives as long as the object (for tests and dry runs).
  static run_store in_memory() { return run_store(":memory:"); }

  /// Ties the store to one plan. A store made for another plan is refused:
  /// resuming it would mix answers to different questions.
  void bind_plan(std::string_view fingerprint) {
    std::scoped_lock lock(mutex_);
    const auto known = meta_locked("plan");
    if (!known) {
      set_meta_locked("plan", fingerprint);
    } else if (*known != fingerprint) {
      throw error(errc::invalid_request, "run store " + name_ +
                                             " holds a run of another evaluation plan; give another --store to start afresh");
    }
  }

  // -- requests --

  /// Adds the requests not there yet, as pending, after those there.
  void plan(std::span<const planned_request> requests) {
    std::scoped_lock lock(mutex_);
    detail::sqlite_transaction transaction(db_);
    detail::sqlite_statement insert(
        db_, "INSERT OR IGNORE INTO requests (key, kind, candidate, prompt, repetition) VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const auto& r : requests) {
      insert.bind(1, r.key).bind(2, to_string(r.kind)).bind(3, r.candidate).bind(4, r.prompt).bind(5, r.repetition);
      insert.run();
    }
    transaction.commit();
  }

  /// The requests still to send (pending, or in flight when a run stopped), in plan order.
  std::vector<planned_request> unfinished() const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(
        db_, "SELECT key, kind, candidate, prompt, repetition FROM requests WHERE state != 'recorded' ORDER BY seq");
    std::vector<planned_request> out;
    while (select.step()) out.push_back(planned_from(select, 0));
    return out;
  }

  /// Marks `key` in flight, committed before the request goes out. Returns
  /// the attempt: 1, or more when a run was killed with it in flight.
  int begin(std::string_view key) {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement update(
        db_, "UPDATE requests SET state = 'in_flight', attempts = attempts + 1 WHERE key = ?1 AND state != 'recorded' "
             "RETURNING attempts");
    update.bind(1, key);
    if (!update.step())
      throw error(errc::invalid_request, "run store " + name_ + ": request \"" + std::string(key) +
                                             "\" is not planned or is recorded already");
    return static_cast<int>(update.integer(0));
  }

  /// Records what came back (an answer or an error): the request is never sent again.
  void finish(const request_result& r) {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement update(
        db_, "UPDATE requests SET state = 'recorded', started_unix_ms = ?2, latency_ms = ?3, ttft_ms = ?4, tokens_in = ?5, "
             "tokens_out = ?6, response = ?7, error = ?8, http_status = ?9, error_message = ?10, overhead_us = ?11, "
             "attempts = max(attempts, ?12) WHERE key = ?1");
    update.bind(1, r.request.key).bind(2, r.started_unix_ms).bind(3, r.latency_ms).bind(4, r.ttft_ms);
    update.bind(5, static_cast<std::int64_t>(r.tokens_in)).bind(6, static_cast<std::int64_t>(r.tokens_out));
    update.bind(7, r.response).bind(8, to_string(r.error)).bind(9, std::int64_t{r.http_status});
    update.bind(10, r.error_message).bind(11, r.overhead_us).bind(12, std::int64_t{r.attempts});
    update.step();
    if (sqlite3_changes(db_.handle()) != 1)
      throw error(errc::invalid_request, "run store " + name_ + ": request \"" + r.request.key + "\" is not planned");
  }

  bool recorded(std::string_view key) const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(db_, "SELECT 1 FROM requests WHERE key = ?1 AND state = 'recorded'");
    select.bind(1, key);
    return select.step();
  }

  /// Every recorded request, in plan order.
  std::vector<request_result> results() const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(
        db_, "SELECT key, kind, candidate, prompt, repetition, started_unix_ms, latency_ms, ttft_ms, tokens_in, tokens_out, "
             "response, error, http_status, error_message, attempts, overhead_us FROM requests WHERE state = 'recorded' "
             "ORDER BY seq");
    std::vector<request_result> out;
    while (select.step()) {
      request_result r{.request = planned_from(select, 0)};
      r.started_unix_ms = select.integer(5);
      r.latency_ms = select.real(6);
      r.ttft_ms = select.real(7);
      r.tokens_in = static_cast<std::uint64_t>(select.integer(8));
      r.tokens_out = static_cast<std::uint64_t>(select.integer(9));
      r.response = select.text(10);
      r.error = request_error_from(select.text(11));
      r.http_status = static_cast<int>(select.integer(12));
      r.error_message = select.text(13);
      r.attempts = static_cast<int>(select.integer(14));
      r.overhead_us = select.real(15);
      out.push_back(std::move(r));
    }
    return out;
  }

  struct request_counts {
    std::size_t planned = 0;   ///< every request, recorded or not
    std::size_t recorded = 0;
    std::size_t errors = 0;    ///< recorded with an error
    std::size_t resent = 0;    ///< sent more than once because a run was killed with them in flight
  };
  request_counts counts() const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(
        db_, "SELECT count(*), count(*) FILTER (WHERE state = 'recorded'), "
             "count(*) FILTER (WHERE state = 'recorded' AND error != 'none'), count(*) FILTER (WHERE attempts > 1) "
             "FROM requests");
    select.step();
    return {static_cast<std::size_t>(select.integer(0)), static_cast<std::size_t>(select.integer(1)),
            static_cast<std::size_t>(select.integer(2)), static_cast<std::size_t>(select.integer(3))};
  }

  // -- scores --

  /// Records a score, replacing the one of the same answer and method.
  void put_score(const score_record& s) {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement insert(
        db_, "INSERT OR REPLACE INTO scores (request_key, method, value, detail) VALUES (?1, ?2, ?3, ?4)");
    insert.bind(1, s.request_key).bind(2, s.method).bind(3, s.value).bind(4, s.detail);
    insert.run();
  }

  bool has_score(std::string_view request_key, std::string_view method) const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(db_, "SELECT 1 FROM scores WHERE request_key = ?1 AND method = ?2");
    select.bind(1, request_key).bind(2, method);
    return select.step();
  }

  std::vector<score_record> scores() const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(db_, "SELECT request_key, method, value, detail FROM scores ORDER BY rowid");
    std::vector<score_record> out;
    while (select.step()) out.push_back({select.text(0), select.text(1), select.optional_real(2), select.text(3)});
    return out;
  }

  // -- ratings --

  /// Records a rating, replacing the rater's earlier one of the same answer.
  void put_rating(const rating_record& r) {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement insert(
        db_, "INSERT OR REPLACE INTO ratings (rater, request_key, score, at_unix_ms) VALUES (?1, ?2, ?3, ?4)");
    insert.bind(1, r.rater).bind(2, r.request_key).bind(3, std::int64_t{r.score}).bind(4, r.at_unix_ms);
    insert.run();
  }

  std::vector<rating_record> ratings() const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(db_, "SELECT rater, request_key, score, at_unix_ms FROM ratings ORDER BY rowid");
    std::vector<rating_record> out;
    while (select.step())
      out.push_back({select.text(0), select.text(1), static_cast<int>(select.integer(2)), select.integer(3)});
    return out;
  }

  /// The answers a rater rates, in the order they are shown (replacing any before).
  void put_assignment(std::string_view rater, std::span<const std::string> request_keys) {
    std::scoped_lock lock(mutex_);
    detail::sqlite_transaction transaction(db_);
    detail::sqlite_statement erase(db_, "DELETE FROM assignments WHERE rater = ?1");
    erase.bind(1, rater);
    erase.run();
    detail::sqlite_statement insert(db_, "INSERT INTO assignments (rater, position, request_key) VALUES (?1, ?2, ?3)");
    for (std::size_t i = 0; i < request_keys.size(); ++i) {
      insert.bind(1, rater).bind(2, static_cast<std::int64_t>(i)).bind(3, request_keys[i]);
      insert.run();
    }
    transaction.commit();
  }

  /// A rater's answers in order; empty when the rater has none.
  std::vector<std::string> assignment(std::string_view rater) const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(db_, "SELECT request_key FROM assignments WHERE rater = ?1 ORDER BY position");
    select.bind(1, rater);
    std::vector<std::string> out;
    while (select.step()) out.push_back(select.text(0));
    return out;
  }

  /// The raters with an assignment, by name.
  std::vector<std::string> raters() const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(db_, "SELECT DISTINCT rater FROM assignments ORDER BY rater");
    std::vector<std::string> out;
    while (select.step()) out.push_back(select.text(0));
    return out;
  }

  // -- the models the kit served itself --

  void put_served_model(const served_model_info& m) {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement insert(
        db_, "INSERT OR REPLACE INTO served_models (candidate, path, file_bytes, quantization, parameters, rss_bytes, engine) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    insert.bind(1, m.candidate).bind(2, m.path).bind(3, static_cast<std::int64_t>(m.file_bytes)).bind(4, m.quantization);
    insert.bind(5, static_cast<std::int64_t>(m.parameters)).bind(6, static_cast<std::int64_t>(m.rss_bytes)).bind(7, m.engine);
    insert.run();
  }

  std::vector<served_model_info> served_models() const {
    std::scoped_lock lock(mutex_);
    detail::sqlite_statement select(
        db_, "SELECT candidate, path, file_bytes, quantization, parameters, rss_bytes, engine FROM served_models ORDER BY rowid");
    std::vector<served_model_info> out;
    while (select.step())
      out.push_back({select.text(0), select.text(1), static_cast<std::uint64_t>(select.integer(2)), select.text(3),
                     static_cast<std::uint64_t>(select.integer(4)), static_cast<std::uint64_t>(select.integer(5)),
                     select.text(6)});
    return out;
  }

  // -- facts of the run --

  void set_meta(std::string_view key, std::string_view value) {
    std::scoped_lock lock(mutex_);
    set_meta_locked(key, value);
  }

  std::optional<std::string> meta(std::string_view key) const {
    std::scoped_lock lock(mutex_);
    return meta_locked(key);
  }

 private:
  // The format this code writes, in SQLite's user_version: a file of
  // another version (or another program's database) is refused.
  static constexpr int format_version = 1;

  void open(const std::string& name) {
    name_ = name;
    std::int64_t version = 0;
    {
      detail::sqlite_statement select(db_, "PRAGMA user_version");  // also reads the header: refuses a file that is not SQLite
      if (select.step()) version = select.integer(0);
    }
    bool empty = false;
    {
      detail::sqlite_statement tables(db_, "SELECT count(*) FROM sqlite_master");
      tables.step();
      empty = tables.integer(0) == 0;
    }
    if (!empty && version != format_version)
      throw error(errc::invalid_request, "run store " + name_ + " is not a run store of this version (user_version " +
                                             std::to_string(version) + ", expected " + std::to_string(format_version) + ")");
    db_.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    if (!empty) return;
    db_.execute(
        "BEGIN;"
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE requests (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, "
        "  candidate TEXT NOT NULL, prompt INTEGER NOT NULL, repetition INTEGER NOT NULL, "
        "  state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0, started_unix_ms INTEGER, "
        "  latency_ms REAL, ttft_ms REAL, tokens_in INTEGER, tokens_out INTEGER, response TEXT, error TEXT, "
        "  http_status INTEGER, error_message TEXT, overhead_us REAL);"
        "CREATE TABLE scores (request_key TEXT NOT NULL, method TEXT NOT NULL, value REAL, detail TEXT NOT NULL, "
        "  PRIMARY KEY (request_key, method));"
        "CREATE TABLE ratings (rater TEXT NOT NULL, request_key TEXT NOT NULL, score INTEGER NOT NULL, "
        "  at_unix_ms INTEGER NOT NULL, PRIMARY KEY (rater, request_key));"
        "CREATE TABLE assignments (rater TEXT NOT NULL, position INTEGER NOT NULL, request_key TEXT NOT NULL, "
        "  PRIMARY KEY (rater, position));"
        "CREATE TABLE served_models (candidate TEXT PRIMARY KEY, path TEXT, file_bytes INTEGER, quantization TEXT, "
        "  parameters INTEGER, rss_bytes INTEGER, engine TEXT);"
        "PRAGMA user_version = 1;"
        "COMMIT;");
  }

  static planned_request planned_from(const detail::sqlite_statement& row, int first) {
    return {row.text(first), request_kind_from(row.text(first + 1)), row.text(first + 2), row.integer(first + 3),
            row.integer(first + 4)};
  }

  static request_kind request_kind_from(std::string_view text) {
    for (auto kind : {request_kind::warmup, request_kind::evaluation, request_kind::schedule, request_kind::judge})
      if (to_string(kind) == text) return kind;
    return request_kind::evaluation;
  }

  static request_failure request_error_from(std::string_view text) {
    for (auto e : {request_failure::none, request_failure::rate_limited, request_failure::server_error, request_failure::client_error,
                   request_failure::timeout, request_failure::unreachable})
      if (to_string(e) == text) return e;
    return request_failure::none;
  }

  void set_meta_locked(std::string_view key, std::string_view value) {
    detail::sqlite_statement insert(db_, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)");
    insert.bind(1, key).bind(2, value);
    insert.run();
  }

  std::optional<std::string> meta_locked(std::string_view key) const {
    detail::sqlite_statement select(db_, "SELECT value FROM meta WHERE key = ?1");
    select.bind(1, key);
    if (!select.step()) return std::nullopt;
    return select.text(0);
  }

  std::string name_;
  mutable detail::sqlite_database db_;
  mutable std::mutex mutex_;
};

}  // namespace llmgate::inline v0
