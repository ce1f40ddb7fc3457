// gateway_metrics: what the gateway counts, per tenant and per backend, and
// its two renderings: Prometheus text (GET /metrics) and the JSON the
// dashboard reads (GET /admin/stats). Fed from one place, the session's
// record of each response it wrote (served_request): every status is
// counted, whoever answered it; a chat request's outcome adds its tenant's,
// its backend's and its cache's figures. One mutex: a request adds to a few
// counters once, which is nothing beside parsing its JSON.
//
// With the gateway's prompt_statistics, the PML families follow: each
// module's tokens reused and computed (llmgate_prompt_module_tokens_total
// {schema, version, module, kind}), the prompts that imported it, each
// schema's prompts and their tokens, and the llama.cpp slot files
// (llmgate_prompt_slot_files_total{event="saved"|"restored"|"fallback"});
// prompt_json is the same for /admin/stats. (llmgate_prompt_tokens_total
// is the tenants' prompt tokens, PML or not.)
//
// stats() also holds the last hour minute by minute (minute_timeline.hpp),
// for the dashboard's chart.
//
// The text is Prometheus's exposition format 0.0.4: a HELP and a TYPE line
// per family, label values escaped, numbers in their shortest form (0.9,
// not 0.90000000000000002; +Inf, NaN), and the latency summary with its
// _sum and _count. tests/server/metrics_test.cpp checks it with promtool.
#pragma once

#include <charconv>     // std::to_chars
#include <chrono>       // std::chrono
#include <cmath>        // std::isnan, std::isinf
#include <cstdint>      // std::uint64_t
#include <functional>   // std::less
#include <limits>       // std::numeric_limits
#include <map>          // std::map
#include <mutex>        // std::mutex, std::lock_guard
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/metrics/latency_histogram.hpp"         // latency_histogram
#include "llmgate/server/operations/minute_timeline.hpp"  // minute_timeline
#include "llmgate/prompt/prompt_statistics.hpp"          // prompt_statistics
#include "llmgate/pipeline/request_context.hpp"          // cache_outcome, to_string
#include "llmgate/server/request_outcome.hpp"            // request_outcome
#include "llmgate/server/operations/served_request.hpp"  // served_request

namespace llmgate::inline v0 {

class gateway_metrics {
 public:
  /// A value read at rendering time (a cache's size, a queue's length;
  /// or a count another part keeps, such as the shared tier's round trips).
  struct gauge {
    std::string name;
    std::string help;
    double value;
    const char* type = "gauge";  ///< or "counter"
    std::string labels = {};     ///< `name="value",...`; gauges of one name follow each other
  };
  using gauges = std::vector<gauge>;

  /// A label value escaped as Prometheus's text format has it (\, " and newlines).
  static std::string escape(std::string_view value) {
    std::string out;
    for (const char c : value) {
      if (c == '\\' || c == '"') out += '\\';
      if (c == '\n') out += "\\n";
      else out += c;
    }
    return out;
  }

  /// Counts a response the gateway wrote, and a chat request's outcome.
  void record(const served_request& served) {
    std::lock_guard lock(mutex_);
    ++statuses_[served.status];
    if (served.outcome) record_outcome(*served.outcome, served.latency);
  }

  /// The text; the PML families too when `prompts` is given.
  std::string prometheus(const gauges& now, const prompt_statistics* prompts = nullptr) const {
    std::lock_guard lock(mutex_);
    std::string out;
    family(out, "llmgate_http_responses_total", "counter",
           "HTTP responses the gateway wrote, by status, on every route (the gateway's own 401, 404, 413 too).");
    for (const auto& [status, count] : statuses_)
      line(out, "llmgate_http_responses_total", "status=\"" + std::to_string(status) + "\"",
           static_cast<double>(count));
    family(out, "llmgate_chat_requests_total", "counter",
           "Chat completion requests answered, by tenant and cache outcome.");
    for (const auto& [name, t] : tenants_)
      for (int outcome = 0; outcome < cache_outcome_count; ++outcome)
        line(out, "llmgate_chat_requests_total",
             "tenant=\"" + escape(name) + "\",cache=\"" +
                 std::string(to_string(static_cast<cache_outcome>(outcome))) + "\"",
             static_cast<double>(t.by_outcome[outcome]));
    tenant_family(out, "llmgate_chat_errors_total", "counter", "Chat requests answered with an error, by tenant.",
                  [](const tenant_counts& t) { return static_cast<double>(t.errors); });
    tenant_family(out, "llmgate_cost_usd_total", "counter", "Money spent on model calls, in US dollars, by tenant.",
                  [](const tenant_counts& t) { return t.cost_usd; });
    tenant_family(out, "llmgate_saved_usd_total", "counter", "Money the caches saved, in US dollars, by tenant.",
                  [](const tenant_counts& t) { return t.saved_usd; });
    tenant_family(out, "llmgate_prompt_tokens_total", "counter", "Prompt tokens of answered requests, by tenant.",
                  [](const tenant_counts& t) { return static_cast<double>(t.prompt_tokens); });
    tenant_family(out, "llmgate_completion_tokens_total", "counter",
                  "Completion tokens of answered requests, by tenant.",
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
    family(out, "llmgate_request_duration_seconds", "summary",
           "Chat completion requests' time from the request read to the response written.");
    const std::uint64_t count = latency_.count();
    for (const double q : {0.5, 0.9, 0.99})
      line(out, "llmgate_request_duration_seconds", "quantile=\"" + number(q) + "\"",
           count ? seconds(latency_.percentile(q)) : not_a_number);  // no observation: NaN, as Prometheus's clients write
    line(out, "llmgate_request_duration_seconds_sum", "", latency_sum_seconds_);
    line(out, "llmgate_request_duration_seconds_count", "", static_cast<double>(count));
    for (std::size_t i = 0; i < now.size(); ++i) {
      const gauge& g = now[i];
      if (i == 0 || now[i - 1].name != g.name) family(out, g.name, g.type, g.help);
      line(out, g.name, g.labels, g.value);
    }
    if (prompts) prompt_families(out, *prompts);
    return out;
  }

  /// The PML figures for /admin/stats: {"schemas": [{schema, version,
  /// prompts, reused_tokens, computed_tokens}], "modules": [{schema,
  /// version, module, ...the same}], "slot_files": {saved, restored,
  /// fallbacks, last_fallback}}.
  static boost::json::object prompt_json(const prompt_statistics& prompts) {
    const auto counts = [](boost::json::object o, const module_counts& c) {
      o["prompts"] = c.prompts;
      o["reused_tokens"] = c.reused_tokens;
      o["computed_tokens"] = c.computed_tokens;
      return o;
    };
    boost::json::array schemas, modules;
    for (const auto& [key, c] : prompts.schemas())
      schemas.push_back(counts({{"schema", key.first}, {"version", key.second}}, c));
    for (const auto& [key, c] : prompts.modules())
      modules.push_back(counts({{"schema", key.schema}, {"version", key.version}, {"module", key.path}}, c));
    const slot_counts slots = prompts.slots();
    return {{"schemas", std::move(schemas)},
            {"modules", std::move(modules)},
            {"slot_files", {{"saved", slots.saved}, {"restored", slots.restored}, {"fallbacks", slots.fallbacks},
                            {"last_fallback", slots.last_fallback}}}};
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
      total.cache_controlled += t.cache_controlled;
      for (int i = 0; i < cache_outcome_count; ++i) total.by_outcome[i] += t.by_outcome[i];
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
    stats["timeline"] = timeline_.json();
    if (!routed_.empty()) {
      boost::json::object routed;
      for (const auto& [model, count] : routed_) routed[model] = count;
      stats["routed"] = std::move(routed);
    }
    return stats;
  }

 private:
  void record_outcome(const request_outcome& r, std::chrono::nanoseconds latency) {
    auto& t = tenants_[r.tenant];
    ++t.requests;
    if (r.status >= 400) ++t.errors;
    else if (r.cache) ++t.by_outcome[static_cast<int>(*r.cache)];
    if (r.cache_controlled) ++t.cache_controlled;
    t.cost_usd += r.cost_usd;
    t.saved_usd += r.saved_usd;
    timeline_.record(r);
    t.prompt_tokens += r.prompt_tokens;
    t.completion_tokens += r.completion_tokens;
    t.latency.record(latency);
    latency_.record(latency);
    latency_sum_seconds_ += seconds(latency);
    if (!r.model.empty()) {
      auto routed = routed_.find(r.model);
      if (routed == routed_.end()) routed = routed_.emplace(std::string(r.model), 0).first;
      ++routed->second;
    }
    if (!r.backend.empty()) {
      // A pool's answer names its replica and why it was chosen
      // ("llama#1; prefix held"): counted by the replica.
      const std::string_view backend = std::string_view(r.backend).substr(0, r.backend.find("; "));
      auto found = backends_.find(backend);
      if (found == backends_.end()) found = backends_.try_emplace(std::string(backend)).first;
      auto& b = found->second;
      ++b.calls;
      if (r.status >= 400) ++b.errors;
      b.cost_usd += r.cost_usd;
      b.latency.record(latency);
    }
  }

  struct tenant_counts {
    std::uint64_t requests = 0, errors = 0, cache_controlled = 0;
    std::uint64_t by_outcome[cache_outcome_count] = {};  // indexed by cache_outcome
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
    const auto count = [&](cache_outcome o) { return t.by_outcome[static_cast<int>(o)]; };
    const auto share = [&](cache_outcome o) { return answered > 0 ? static_cast<double>(count(o)) / answered : 0.0; };
    return {{"name", name},
            {"requests", t.requests},
            {"errors", t.errors},
            {"exact_hits", count(cache_outcome::exact)},
            {"semantic_hits", count(cache_outcome::semantic)},
            {"coalesced", count(cache_outcome::coalesced)},
            {"misses", count(cache_outcome::miss)},
            {"exact_hit_rate", share(cache_outcome::exact)},
            {"semantic_hit_rate", share(cache_outcome::semantic)},
            {"calls_saved", t.requests - t.errors - count(cache_outcome::miss)},
            {"cache_controlled", t.cache_controlled},
            {"cost_usd", t.cost_usd},
            {"saved_usd", t.saved_usd},
            {"latency_ms", percentiles(t.latency)}};
  }

  static boost::json::object percentiles(const latency_histogram& h) {
    const auto ms = [&](double q) { return seconds(h.percentile(q)) * 1e3; };
    return {{"p50", ms(0.5)}, {"p90", ms(0.9)}, {"p99", ms(0.99)}};
  }

  static void prompt_families(std::string& out, const prompt_statistics& prompts) {
    const auto modules = prompts.modules();
    const auto schemas = prompts.schemas();
    const auto module_labels = [](const prompt_statistics::module_key& key) {
      return "schema=\"" + escape(key.schema) + "\",version=\"" + escape(key.version) + "\",module=\"" +
             escape(key.path) + "\"";
    };
    const auto schema_labels = [](const std::pair<std::string, std::string>& key) {
      return "schema=\"" + escape(key.first) + "\",version=\"" + escape(key.second) + "\"";
    };
    family(out, "llmgate_prompt_module_tokens_total", "counter",
           "Tokens of imported PML modules that model servers reused (kind=reused) or computed (kind=computed), "
           "as their usage reports, on fresh answers.");
    for (const auto& [key, c] : modules) {
      line(out, "llmgate_prompt_module_tokens_total", module_labels(key) + ",kind=\"reused\"",
           static_cast<double>(c.reused_tokens));
      line(out, "llmgate_prompt_module_tokens_total", module_labels(key) + ",kind=\"computed\"",
           static_cast<double>(c.computed_tokens));
    }
    family(out, "llmgate_prompt_module_imports_total", "counter",
           "Fresh answers to PML prompts that imported the module.");
    for (const auto& [key, c] : modules)
      line(out, "llmgate_prompt_module_imports_total", module_labels(key), static_cast<double>(c.prompts));
    family(out, "llmgate_prompt_schema_tokens_total", "counter",
           "Prompt tokens of freshly answered PML prompts, reused or computed, by schema.");
    for (const auto& [key, c] : schemas) {
      line(out, "llmgate_prompt_schema_tokens_total", schema_labels(key) + ",kind=\"reused\"",
           static_cast<double>(c.reused_tokens));
      line(out, "llmgate_prompt_schema_tokens_total", schema_labels(key) + ",kind=\"computed\"",
           static_cast<double>(c.computed_tokens));
    }
    family(out, "llmgate_prompt_schema_prompts_total", "counter", "Freshly answered PML prompts, by schema.");
    for (const auto& [key, c] : schemas)
      line(out, "llmgate_prompt_schema_prompts_total", schema_labels(key), static_cast<double>(c.prompts));
    const slot_counts slots = prompts.slots();
    family(out, "llmgate_prompt_slot_files_total", "counter",
           "llama.cpp slot files of PML schemas saved and restored, and prompts sent with plain prefix caching "
           "because a slot file could not be used (event=fallback).");
    line(out, "llmgate_prompt_slot_files_total", "event=\"saved\"", static_cast<double>(slots.saved));
    line(out, "llmgate_prompt_slot_files_total", "event=\"restored\"", static_cast<double>(slots.restored));
    line(out, "llmgate_prompt_slot_files_total", "event=\"fallback\"", static_cast<double>(slots.fallbacks));
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
  // The shortest text that reads back as `value`, in Prometheus's spelling
  // of the values that are not numbers.
  static std::string number(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    char text[32];
    return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
  }
  static constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
  static double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }
  mutable std::mutex mutex_;
  std::map<std::string, tenant_counts> tenants_;
  std::map<std::string, backend_counts, std::less<>> backends_;
  std::map<unsigned, std::uint64_t> statuses_;
  std::map<std::string, std::uint64_t, std::less<>> routed_;  // by the model a router chose
  latency_histogram latency_;  // chat requests'
  minute_timeline timeline_;   // the last hour's, minute by minute
  double latency_sum_seconds_ = 0;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace llmgate::inline v0
