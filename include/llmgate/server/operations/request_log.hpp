// request_log: one JSON line per request the gateway answered, whatever
// answered it (fed from the session's served_request, as the metrics are):
// time, method, path, status, tenant, latency; for a chat request its
// W3C trace (trace_id, the gateway's span_id, the client's parent_span_id
// when it sent a traceparent), its outcome (status, backend) and, once it reached the pipeline, the cache's
// verdict, tokens and cost. Never the prompt, the answer, a key or a query
// string. Numbers are plain decimals ("time":1795692372.1728883,
// "saved_usd":0.0), as every JSON the gateway writes. Lines from many
// threads never interleave.
#pragma once

#include <chrono>       // std::chrono::system_clock
#include <cstdint>      // std::uint64_t
#include <cstdio>       // std::FILE, std::fputs, std::fflush
#include <mutex>        // std::mutex, std::lock_guard
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/wire/detail/json_appender.hpp"         // json_appender
#include "llmgate/server/operations/served_request.hpp"  // served_request

namespace llmgate::inline v0 {

class request_log {
 public:
  /// Writes to `out` (stderr by default; nullptr: nowhere). A log with
  /// requests disabled still writes events.
  explicit request_log(bool enabled = true, std::FILE* out = stderr) : enabled_(enabled), out_(out) {}

  /// Whether request lines are written (events always are).
  bool requests_enabled() const noexcept { return enabled_ && out_; }

  void write(const served_request& s) {
    if (!requests_enabled()) return;
    std::string text;
    detail::json_appender json(text);
    json.raw("{\"time\":");
    json.number(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
    json.raw(",\"method\":");
    json.string(s.method);
    json.raw(",\"path\":");
    json.string(s.path);
    json.raw(",\"status\":");
    json.number(std::uint64_t{s.status});
    if (s.tenant) {
      json.raw(",\"tenant\":");
      json.string(*s.tenant);
    }
    json.raw(",\"latency_ms\":");
    json.number(std::chrono::duration<double, std::milli>(s.latency).count());
    json.raw(",\"stream\":");
    json.raw(s.streamed ? "true" : "false");
    if (s.aborted) json.raw(",\"aborted\":true");
    if (s.outcome) write_outcome(json, s, *s.outcome);
    text.append("}\n");
    put(text);
  }

  /// A line of the gateway's own (start, stop, snapshots), as JSON too.
  void event(std::string_view what, boost::json::object details = {}) {
    if (!out_) return;
    details["event"] = what;
    std::string text;
    detail::json_appender(text).value(details);
    text.push_back('\n');
    put(text);
  }

 private:
  // A chat request's own fields; the cache's and the money's only once it
  // reached the pipeline (a 400 for its body never looked at a cache).
  static void write_outcome(detail::json_appender& json, const served_request& s, const request_outcome& r) {
    json.raw(",\"trace_id\":");
    json.string(r.trace.trace_id());
    json.raw(",\"span_id\":");
    json.string(r.trace.span());
    if (r.trace.parent_id != 0) {
      json.raw(",\"parent_span_id\":");
      json.string(r.trace.parent());
    }
    if (r.status != s.status) {  // a stream that began with 200 and failed
      json.raw(",\"outcome_status\":");
      json.number(std::uint64_t{r.status});
    }
    if (!r.backend.empty()) {
      json.raw(",\"backend\":");
      json.string(r.backend);
    }
    if (!r.cache) return;
    json.raw(",\"cache\":");
    json.string(to_string(*r.cache));
    json.raw(",\"prompt_tokens\":");
    json.number(r.prompt_tokens);
    json.raw(",\"completion_tokens\":");
    json.number(r.completion_tokens);
    json.raw(",\"cost_usd\":");
    json.number(r.cost_usd);
    json.raw(",\"saved_usd\":");
    json.number(r.saved_usd);
    if (!r.model.empty()) {
      json.raw(",\"model\":");
      json.string(r.model);
      json.raw(",\"route\":");
      json.string(r.route);
    }
  }

  void put(const std::string& text) {
    std::lock_guard lock(mutex_);
    std::fputs(text.c_str(), out_);
    std::fflush(out_);
  }

  bool enabled_;
  std::FILE* out_;
  std::mutex mutex_;
};

}  // namespace llmgate::inline v0
