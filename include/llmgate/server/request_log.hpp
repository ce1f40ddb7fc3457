// request_log: one JSON line per request (tenant, route, status, cache
// outcome, backend, latency, tokens, cost), never the prompt, the answer or
// a key. Lines from many threads never interleave.
#pragma once

#include <chrono>       // std::chrono::system_clock
#include <cstdio>       // std::FILE, std::fputs, std::fflush
#include <mutex>        // std::mutex, std::lock_guard
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/object.hpp>     // boost::json::object
#include <boost/json/serialize.hpp>  // boost::json::serialize

#include "llmgate/server/metrics.hpp"  // request_outcome

namespace llmgate::inline v0 {

class request_log {
 public:
  /// Writes to `out` (stderr by default; nullptr: nowhere). A log with
  /// requests disabled still writes events.
  explicit request_log(bool enabled = true, std::FILE* out = stderr) : enabled_(enabled), out_(out) {}

  /// Whether request lines are written (events always are).
  bool requests_enabled() const noexcept { return enabled_ && out_; }

  void write(std::string_view method, std::string_view path, const request_outcome& r, bool streamed) {
    if (!enabled_ || !out_) return;
    const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    boost::json::object line{{"time", now},
                             {"method", method},
                             {"path", path},
                             {"status", r.status},
                             {"tenant", r.tenant},
                             {"cache", to_string(r.cache)},
                             {"backend", r.backend},
                             {"stream", streamed},
                             {"latency_ms", std::chrono::duration<double, std::milli>(r.latency).count()},
                             {"prompt_tokens", r.prompt_tokens},
                             {"completion_tokens", r.completion_tokens},
                             {"cost_usd", r.cost_usd},
                             {"saved_usd", r.saved_usd}};
    if (!r.model.empty()) {
      line["model"] = r.model;
      line["route"] = r.route;
    }
    const std::string text = boost::json::serialize(line) + "\n";
    std::lock_guard lock(mutex_);
    std::fputs(text.c_str(), out_);
    std::fflush(out_);
  }

  /// A line of the gateway's own (start, stop, snapshots), as JSON too.
  void event(std::string_view what, boost::json::object details = {}) {
    if (!out_) return;
    details["event"] = what;
    const std::string text = boost::json::serialize(details) + "\n";
    std::lock_guard lock(mutex_);
    std::fputs(text.c_str(), out_);
    std::fflush(out_);
  }

 private:
  bool enabled_;
  std::FILE* out_;
  std::mutex mutex_;
};

}  // namespace llmgate::inline v0
