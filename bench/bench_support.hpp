// What every llmgate benchmark shares: timing, progress on stderr, tables
// for people and JSON lines for machines, and the copies of both written
// under bench/results/ so that runs can be compared later.
#pragma once

#include <algorithm>    // std::min, std::max
#include <chrono>       // std::chrono::steady_clock
#include <concepts>     // std::integral
#include <cstdarg>      // va_list for progress()
#include <cstdio>       // std::snprintf, std::vfprintf
#include <ctime>        // std::time, localtime_r, std::strftime, clock_gettime
#include <filesystem>   // std::filesystem::create_directories
#include <fstream>      // std::ofstream
#include <iostream>     // std::cout
#include <optional>     // std::optional for values a run may not reach
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

namespace llmgate_bench {

using steady = std::chrono::steady_clock;

inline double seconds_since(steady::time_point start) {
  return std::chrono::duration<double>(steady::now() - start).count();
}

/// Seconds one call of `work` takes.
template <class Work>
double time_once(Work&& work) {
  const auto start = steady::now();
  work();
  return seconds_since(start);
}

/// Seconds on a processor-time clock (CLOCK_THREAD_CPUTIME_ID, ...).
inline double cpu_seconds_of(clockid_t clock) {
  timespec now;
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

/// Seconds of processor time this thread has used: unlike steady_clock, it
/// does not count the time the thread waited while others ran, which on a
/// shared machine is most of a slow outlier.
inline double thread_cpu_seconds() { return cpu_seconds_of(CLOCK_THREAD_CPUTIME_ID); }

/// Seconds of processor time every thread of this process has used
/// together: what a benchmark running its peer, its load and the code
/// measured in one process costs the machine.
inline double process_cpu_seconds() { return cpu_seconds_of(CLOCK_PROCESS_CPUTIME_ID); }

/// printf-style progress line on stderr, so stdout stays tables and JSON.
[[gnu::format(printf, 1, 2)]] inline void progress(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
}

/// A number as text with `digits` significant digits, or "-" when absent.
inline std::string number(std::optional<double> value, int digits = 4) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", digits, *value);
  return text;
}

/// One flat JSON object, keys in the order added. Absent numbers are null.
class json_line {
 public:
  json_line& add(std::string_view key, std::string_view text) {
    key_(key);
    body_ += '"';
    body_ += text;  // benchmark names and arch names: no characters to escape
    body_ += '"';
    return *this;
  }
  json_line& add(std::string_view key, const char* text) { return add(key, std::string_view(text)); }
  json_line& add(std::string_view key, std::optional<double> value) {
    key_(key);
    body_ += value ? number(value, 6) : "null";
    return *this;
  }
  json_line& add(std::string_view key, double value) { return add(key, std::optional(value)); }
  template <std::integral Integer>
  json_line& add(std::string_view key, Integer value) {
    key_(key);
    body_ += std::to_string(value);
    return *this;
  }

  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key_(std::string_view key) {
    if (!body_.empty()) body_ += ',';
    body_ += '"';
    body_ += key;
    body_ += "\":";
  }

  std::string body_;
};

/// Rows of text under named columns, printed aligned for people and saved
/// as CSV for spreadsheets.
class table {
 public:
  explicit table(std::vector<std::string> columns) : columns_(std::move(columns)) {}

  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

  void print(std::ostream& out) const {
    std::vector<std::size_t> width(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].size();
    for (const auto& row : rows_)
      for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
        width[c] = std::max(width[c], row[c].size());
    const auto line = [&](const std::vector<std::string>& cells) {
      for (std::size_t c = 0; c < cells.size(); ++c)
        out << (c ? "  " : "") << std::string(width[c] - cells[c].size(), ' ') << cells[c];
      out << '\n';
    };
    line(columns_);
    for (const auto& row : rows_) line(row);
  }

  void write_csv(std::ostream& out) const {
    const auto line = [&](const std::vector<std::string>& cells) {
      for (std::size_t c = 0; c < cells.size(); ++c) out << (c ? "," : "") << cells[c];
      out << '\n';
    };
    line(columns_);
    for (const auto& row : rows_) line(row);
  }

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

/// Prints the JSON lines on stdout (last, as the benchmarks promise) and
/// saves them with the table as bench/results/<name>-<local time>.jsonl/.csv.
inline void publish(std::string_view name, const table& results, const std::vector<std::string>& lines) {
  for (const auto& line : lines) std::cout << line << '\n';
  std::cout.flush();

  const std::filesystem::path directory = LLMGATE_BENCH_RESULTS_DIR;
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  const auto stem = directory / (std::string(name) + "-" + stamp);

  std::ofstream jsonl(stem.string() + ".jsonl");
  for (const auto& line : lines) jsonl << line << '\n';
  std::ofstream csv(stem.string() + ".csv");
  results.write_csv(csv);
  if (ec || !jsonl || !csv)
    progress("warning: could not write results under %s", directory.c_str());
  else
    progress("results: %s.{jsonl,csv}", stem.c_str());
}

inline void publish(std::string_view name, const table& results, const std::vector<json_line>& lines) {
  std::vector<std::string> text;
  for (const auto& line : lines) text.push_back(line.str());
  publish(name, results, text);
}

}  // namespace llmgate_bench
