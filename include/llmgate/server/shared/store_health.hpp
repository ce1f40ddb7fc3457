// store_health: what the shared tier last heard from its Redis: whether it
// answers (and, while away, why not), how many commands went and how many
// failed, with a log event at each change. The tier's writer, tailer and
// snapshot lease report here, on the tier's thread; statistics() reads it
// from any thread.
#pragma once

#include <atomic>       // std::atomic
#include <cstdint>      // std::uint64_t
#include <exception>    // std::exception
#include <functional>   // std::function
#include <mutex>        // std::mutex, std::lock_guard
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include "llmgate/error.hpp"                          // llmgate::error, errc
#include "llmgate/server/operations/request_log.hpp"  // request_log

namespace llmgate::inline v0 {

class store_health {
 public:
  /// `on_outage` runs (on the thread that reported it) when the store goes
  /// away: the writer probes it until it answers again.
  store_health(request_log& log, std::string replica, std::function<void()> on_outage)
      : log_(log), replica_(std::move(replica)), on_outage_(std::move(on_outage)) {}

  void answered(std::uint64_t commands) {
    round_trips_ += commands;
    if (!available_.exchange(true)) log_.event("shared_store_available", {{"replica", replica_}});
  }

  /// A failure of `commands` commands. One that says the store is away
  /// (unreachable, too slow) starts an outage; a store that answered with
  /// an error is not away.
  void failed(std::uint64_t commands, const std::exception& e) {
    errors_ += commands;
    if (!outage(e)) {
      log_.event("shared_store_error", {{"replica", replica_}, {"error", e.what()}});
      return;
    }
    {
      std::lock_guard lock(detail_mutex_);
      detail_ = e.what();
    }
    if (available_.exchange(false)) {
      log_.event("shared_store_unavailable", {{"replica", replica_}, {"error", e.what()}});
      on_outage_();
    }
  }

  /// An error that is not the store's: a value no replica of this version
  /// wrote, a read past its timeout, a change that does not apply here.
  void count_error() { ++errors_; }

  /// A refused login or a failed handshake will not mend by retrying.
  static bool refused_for_good(const std::exception& e) {
    const std::string_view what = e.what();
    return what.find("AUTH refused") != std::string_view::npos ||
           what.find("login required") != std::string_view::npos ||
           what.find("TLS handshake failed") != std::string_view::npos;
  }

  bool available() const noexcept { return available_.load(); }
  /// Why the store is away ("" when it answers).
  std::string detail() const {
    if (available()) return {};
    std::lock_guard lock(detail_mutex_);
    return detail_;
  }
  std::uint64_t round_trips() const noexcept { return round_trips_.load(); }
  std::uint64_t errors() const noexcept { return errors_.load(); }
  const std::string& replica() const noexcept { return replica_; }

 private:
  static bool outage(const std::exception& e) {
    const auto* failure = dynamic_cast<const error*>(&e);
    return !failure || failure->code() == errc::store_unreachable || failure->code() == errc::store_timeout;
  }

  request_log& log_;
  const std::string replica_;
  const std::function<void()> on_outage_;
  std::atomic<bool> available_{false};
  std::atomic<std::uint64_t> round_trips_{0}, errors_{0};
  mutable std::mutex detail_mutex_;
  std::string detail_ = "not connected yet";
};

}  // namespace llmgate::inline v0
