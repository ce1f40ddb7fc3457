// run_progress: how far an evaluation run is, on stderr, phase by phase
// (warmup, evaluation, schedule):
//
//   evaluation 37/150, 2 errors, 1 resent, ETA 1m12s
//   evaluation 150/150, 3 errors, 1 resent, done in 3m02s
//
// At most one line a second while requests end, and each phase's last line
// when it ends. The counts include what the run store held already (a
// resumed run starts where it stopped); the ETA is the time per request
// measured in this run times the requests left, or longer where the phase
// cannot end sooner (the latency schedule's last tick). The stream and the
// clock are given so that a test sees exact lines.
#pragma once

#include <algorithm>    // std::max, std::min
#include <chrono>       // std::chrono::steady_clock, duration_cast
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t
#include <functional>   // std::function
#include <iostream>     // std::cerr
#include <optional>     // std::optional
#include <ostream>      // std::ostream
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include "llmgate/eval/run/run_records.hpp"  // request_result

namespace llmgate::inline v0 {

/// What a phase holds: its requests, those recorded, and of those the
/// failed and the resent ones.
struct progress_counts {
  std::size_t total = 0;
  std::size_t done = 0;
  std::size_t errors = 0;
  std::size_t resent = 0;
};

class run_progress {
 public:
  using clock = std::chrono::steady_clock;

  explicit run_progress(std::ostream& out = std::cerr, std::function<clock::time_point()> now = &steady_now)
      : out_(&out), now_(std::move(now)) {}

  static clock::time_point steady_now() { return clock::now(); }

  /// A phase begins with `counts` as the store holds them. `ends_at`: the
  /// phase cannot end before then (the schedule's last tick).
  void start(std::string_view phase, progress_counts counts, std::optional<clock::time_point> ends_at = {}) {
    phase_ = phase;
    counts_ = counts;
    done_at_start_ = counts.done;
    ends_at_ = ends_at;
    started_ = last_line_ = now_();
  }

  /// One request of the phase was recorded; a line when a second has passed since the last.
  void record(const request_result& result) {
    ++counts_.done;
    counts_.errors += !result.ok();
    counts_.resent += result.attempts > 1;
    const auto now = now_();
    if (now - last_line_ < std::chrono::seconds(1)) return;
    last_line_ = now;
    *out_ << line(now) << '\n' << std::flush;
  }

  /// The phase ended: its last line.
  void finish() {
    const auto now = now_();
    last_line_ = now;
    *out_ << head() << ", done in " << duration(now - started_) << '\n' << std::flush;
  }

  const progress_counts& counts() const noexcept { return counts_; }

  /// The line record() prints at `now`, without its newline.
  std::string line(clock::time_point now) const {
    std::string text = head() + ", ETA ";
    const std::size_t measured = counts_.done - done_at_start_;
    if (measured == 0 && !ends_at_) return text + "?";
    clock::duration left{};
    if (measured > 0) left = (now - started_) / static_cast<std::int64_t>(measured) * static_cast<std::int64_t>(counts_.total - std::min(counts_.done, counts_.total));
    if (ends_at_ && *ends_at_ - now > left) left = *ends_at_ - now;
    return text + duration(left);
  }

  /// "45s", "3m02s", "1h05m00s": whole seconds, rounded down.
  static std::string duration(clock::duration span) {
    const std::int64_t total = std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(span).count());
    const auto two = [](std::int64_t n) { return (n < 10 ? "0" : "") + std::to_string(n); };
    const std::int64_t hours = total / 3600, minutes = total / 60 % 60, seconds = total % 60;
    if (hours > 0) return std::to_string(hours) + "h" + two(minutes) + "m" + two(seconds) + "s";
    if (minutes > 0) return std::to_string(minutes) + "m" + two(seconds) + "s";
    return std::to_string(seconds) + "s";
  }

 private:
  std::string head() const {
    return phase_ + " " + std::to_string(counts_.done) + "/" + std::to_string(counts_.total) + ", " +
           std::to_string(counts_.errors) + (counts_.errors == 1 ? " error, " : " errors, ") +
           std::to_string(counts_.resent) + " resent";
  }

  std::ostream* out_;
  std::function<clock::time_point()> now_;
  std::string phase_;
  progress_counts counts_;
  std::size_t done_at_start_ = 0;
  std::optional<clock::time_point> ends_at_;
  clock::time_point started_{};
  clock::time_point last_line_{};
};

}  // namespace llmgate::inline v0
