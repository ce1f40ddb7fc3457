// gateway_metrics: what the gateway counts, per tenant and per backend, and
// its two renderings: Prometheus text (GET /metrics) and the JSON the
// dashboard reads (GET /admin/stats). One mutex: a request adds to a few
// counters once, which is nothing beside parsing its JSON.
#pragma once

#include <chrono>       // std::chrono
#include <cstdint>      // std::uint64_t
#include <cstdio>       // std::snprintf
#include <functional>   // std::less
#include <map>          // std::map
#include <mutex>        // std::mutex, std::lock_guard
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/metrics/latency_histogram.hpp"
#include "llmgate/pipeline/request_context.hpp"

namespace llmgate::inline v0 {

/// What one chat request did, as the metrics and the log see it.
struct request_outcome {
  std::string tenant;
  cache_outcome cache = cache_outcome::miss;
  std::string backend = {};
  unsigned status = 200;
  std::chrono::nanoseconds latency{};
  std::uint64_t prompt_tokens = 0;
  std::uint64_t completion_tokens = 0;
  double cost_usd = 0;
  double saved_usd = 0;
  std::string_view model = {};  ///< the model a router chose (alive while the router is); empty: not routed
  std::string route = {};       ///< the router's reasons, for the log; empty: not routed or not logged
};

class gateway_metrics {
 public:
  /// Gauges read at rendering time (cache sizes, queue lengths), by name.
  using gauges = std::map<std::string, double>;

  void record(const request_outcome& r) {
    std::lock_guard lock(mutex_);
    auto& t = tenants_[r.tenant];
    ++t.requests;
    if (r.status >= 400) ++t.errors;
    else ++t.by_outcome[static_cast<int>(r.cache)];
    t.cost_usd += r.cost_usd;
    t.saved_usd += r.saved_usd;
    t.prompt_tokens += r.prompt_tokens;
    t.completion_tokens += r.completion_tokens;
    t.latency.record(r.latency);
    ++statuses_[r.status];
    latency_.record(r.latency);
    if (!r.model.empty()) {
      auto routed = routed_.find(r.model);
      if (routed == routed_.end()) routed = routed_.emplace(std::string(r.model), 0).first;
      ++routed->second;
    }
    if (!r.backend.empty()) {
      auto& b = backends_[r.backend];
      ++b.calls;
      if (r.status >= 400) ++b.errors;
      b.cost_usd += r.cost_usd;
      b.latency.record(r.latency);
    }
  }

  /// Requests that never reached a tenant (401, 404 paths, 413...).
  void record_status(unsigned status) {
    std::lock_guard lock(mutex_);
    ++statuses_[status];
  }

  std::string prometheus(const gauges& now) const {
    std::lock_guard lock(mutex_);
    std::string out;
    family(out, "llmgate_chat_requests_total", "counter", "Chat completion requests by tenant and cache outcome.");
    for (const auto& [name, t] : tenants_)
      for (int outcome = 0; outcome < 3; ++outcome)
        line(out, "llmgate_chat_requests_total",
             "tenant=\"" + escape(name) + "\",cache=\"" +
                 std::string(to_string(static_cast<cache_outcome>(outcome))) + "\"",
             static_cast<double>(t.by_outcome[outcome]));
    tenant_family(out, "llmgate_chat_errors_total", "counter", "Chat requests answered with an error.",
                  [](const tenant_counts& t) { return static_cast<double>(t.errors); });
    tenant_family(out, "llmgate_cost_usd_total", "counter", "Money spent on model calls, USD.",
                  [](const tenant_counts& t) { return t.cost_usd; });
    tenant_family(out, "llmgate_saved_usd_total", "counter", "Money the caches saved, USD.",
                  [](const tenant_counts& t) { return t.saved_usd; });
    tenant_family(out, "llmgate_prompt_tokens_total", "counter", "Prompt tokens of answered requests.",
                  [](const tenant_counts& t) { return static_cast<double>(t.prompt_tokens); });
    tenant_family(out, "llmgate_completion_tokens_total", "counter", "Completion tokens of answered requests.",
                  [](const tenant_counts& t) { return static_cast<double>(t.completion_tokens); });
    family(out, "llmgate_backend_calls_total", "counter", "Requests a backend answered or failed.");
    for (const auto& [name, b] : backends_)
      line(out, "llmgate_backend_calls_total", "backend=\"" + escape(name) + "\"", static_cast<double>(b.calls));
    family(out, "llmgate_backend_errors_total", "counter", "Requests a backend failed.");
    for (const auto& [name, b] : backends_)
      line(out, "llmgate_backend_errors_total", "backend=\"" + escape(name) + "\"", static_cast<double>(b.errors));
    if (!routed_.empty()) {
      family(out, "llmgate_routed_requests_total", "counter", "Chat requests the router sent to each model.");
      for (const auto& [model, count] : routed_)
        line(out, "llmgate_routed_requests_total", "model=\"" + escape(model) + "\"", static_cast<double>(count));
    }
    family(out, "llmgate_http_responses_total", "counter", "HTTP responses by status.");
    for (const auto& [status, count] : statuses_)
      line(out, "llmgate_http_responses_total", "status=\"" + std::to_string(status) + "\"",
           static_cast<double>(count));
    family(out, "llmgate_request_duration_seconds", "summary", "Chat request latency.");
    for (const double q : {0.5, 0.9, 0.99})
      line(out, "llmgate_request_duration_seconds", "quantile=\"" + number(q) + "\"", seconds(latency_.percentile(q)));
    for (const auto& [name, value] : now) {
      family(out, name, "gauge", "");
      line(out, name, "", value);
    }
    return out;
  }

  /// The dashboard's figures.
  boost::json::object stats() const {
    std::lock_guard lock(mutex_);
    tenant_counts total;
    boost::json::array tenants;
    for (const auto& [name, t] : tenants_) {
      tenants.push_back(tenant_json(name, t));
      total.requests += t.requests;
      total.errors += t.errors;
      for (int i = 0; i < 3; ++i) total.by_outcome[i] += t.by_outcome[i];
      total.cost_usd += t.cost_usd;
      total.saved_usd += t.saved_usd;
    }
    boost::json::array backends;
    for (const auto& [name, b] : backends_)
      backends.push_back({{"name", name}, {"calls", b.calls}, {"errors", b.errors}, {"cost_usd", b.cost_usd},
                          {"latency_ms", percentiles(b.latency)}});
    boost::json::object all = tenant_json("all", total);
    all["latency_ms"] = percentiles(latency_);
    boost::json::object stats{{"uptime_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()},
                              {"total", std::move(all)},
                              {"tenants", std::move(tenants)},
                              {"backends", std::move(backends)}};
    if (!routed_.empty()) {
      boost::json::object routed;
      for (const auto& [model, count] : routed_) routed[model] = count;
      stats["routed"] = std::move(routed);
    }
    return stats;
  }

 private:
  struct tenant_counts {
    std::uint64_t requests = 0, errors = 0;
    std::uint64_t by_outcome[3] = {0, 0, 0};  // indexed by cache_outcome
    std::uint64_t prompt_tokens = 0, completion_tokens = 0;
    double cost_usd = 0, saved_usd = 0;
    latency_histogram latency;
  };
  struct backend_counts {
    std::uint64_t calls = 0, errors = 0;
    double cost_usd = 0;
    latency_histogram latency;
  };

  static boost::json::object tenant_json(const std::string& name, const tenant_counts& t) {
    const auto answered = static_cast<double>(t.requests - t.errors);
    const auto share = [&](cache_outcome o) {
      return answered > 0 ? static_cast<double>(t.by_outcome[static_cast<int>(o)]) / answered : 0.0;
    };
    return {{"name", name},
            {"requests", t.requests},
            {"errors", t.errors},
            {"exact_hits", t.by_outcome[static_cast<int>(cache_outcome::exact)]},
            {"semantic_hits", t.by_outcome[static_cast<int>(cache_outcome::semantic)]},
            {"misses", t.by_outcome[static_cast<int>(cache_outcome::miss)]},
            {"exact_hit_rate", share(cache_outcome::exact)},
            {"semantic_hit_rate", share(cache_outcome::semantic)},
            {"calls_saved", t.by_outcome[1] + t.by_outcome[2]},
            {"cost_usd", t.cost_usd},
            {"saved_usd", t.saved_usd},
            {"latency_ms", percentiles(t.latency)}};
  }

  static boost::json::object percentiles(const latency_histogram& h) {
    const auto ms = [&](double q) { return seconds(h.percentile(q)) * 1e3; };
    return {{"p50", ms(0.5)}, {"p90", ms(0.9)}, {"p99", ms(0.99)}};
  }

  template <class Value>
  void tenant_family(std::string& out, std::string_view name, std::string_view type, std::string_view help,
                     Value value) const {
    family(out, name, type, help);
    for (const auto& [tenant, t] : tenants_) line(out, name, "tenant=\"" + escape(tenant) + "\"", value(t));
  }

  static void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
    if (!help.empty()) out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  }
  static void line(std::string& out, std::string_view name, const std::string& labels, double value) {
    out.append(name);
    if (!labels.empty()) out.append("{").append(labels).append("}");
    out.append(" ").append(number(value)).append("\n");
  }
  static std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
  }
  static double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }
  // Label values escape \, " and newlines (Prometheus text format).
  static std::string escape(std::string_view value) {
    std::string out;
    for (const char c : value) {
      if (c == '\\' || c == '"') out += '\\';
      if (c == '\n') out += "\\n";
      else out += c;
    }
    return out;
  }

  mutable std::mutex mutex_;
  std::map<std::string, tenant_counts> tenants_;
  std::map<std::string, backend_counts> backends_;
  std::map<unsigned, std::uint64_t> statuses_;
  std::map<std::string, std::uint64_t, std::less<>> routed_;  // by the model a router chose
  latency_histogram latency_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace llmgate::inline v0
