// report: an evaluation run as one self-contained HTML page that people
// open and read: no script, no font, no stylesheet or image beside it (CSS
// and SVG inline), so it can be mailed or attached as it is. It shows the
// candidates (backend and model or GGUF file, sampling, quantisation, size,
// memory in use where the kit served them, price), their figures, and the
// plots of svg_plot.hpp, each an <svg class="plot" data-plot="<name>">:
//
//   score-distribution    box plots of every method's scores (and people's
//                         ratings / 10) per candidate
//   latency               send to last byte per candidate (evaluation answers)
//   per-token-latency     ms per output token after the first
//   latency-by-hour       box plots by UTC hour of sending, evaluation and
//                         latency-schedule answers
//   errors-by-hour        failed requests by UTC hour
//   availability-by-hour  answered / sent by UTC hour
//   tokens-generated      output tokens of the evaluation per candidate
//   cost-per-1k-tokens    USD per 1K tokens per candidate
//   cost-reduction        the reference's cost per 1K tokens / the candidate's
//   agreement             each method's Spearman correlation and bottom-k
//                         Jaccard index against people's ranking (when people
//                         rated; otherwise a note says so)
//
// All text from the run (names, models, errors) is HTML-escaped.
// write_report_files() writes the page beside the CSV and JSON-line files
// of results_files.hpp.
#pragma once

#include <algorithm>    // std::find_if, std::max
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <filesystem>   // std::filesystem::path, create_directories, absolute
#include <functional>   // std::less
#include <iterator>     // std::size
#include <map>          // std::map
#include <optional>     // std::optional
#include <set>          // std::set
#include <span>         // std::span
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/object.hpp>     // boost::json::object
#include <boost/json/serialize.hpp>  // boost::json::serialize
#include <boost/json/value.hpp>      // boost::json::value

#include "llmgate/error.hpp"                           // llmgate::error, errc
#include "llmgate/eval/detail/report_text.hpp"         // escape_html, number_text, fixed_text, significant_text, utc_text, utc_hour
#include "llmgate/eval/plan/evaluation_plan.hpp"       // evaluation_plan, evaluation_candidate
#include "llmgate/eval/report/evaluation_summary.hpp"  // evaluation_summary
#include "llmgate/eval/report/results_files.hpp"       // evaluation_methods, *_csv, evaluation_json_lines, write_report_file
#include "llmgate/eval/run/run_records.hpp"            // request_result, score_record, rating_record, served_model_info
#include "llmgate/eval/report/svg_plot.hpp"            // svg::box_plot, svg::bar_chart

namespace llmgate::inline v0 {

/// What a report is made from: the run store's content, the plan and its
/// summary (summarize()), and when it was made.
struct report_input {
  const evaluation_plan& plan;
  const evaluation_summary& summary;
  std::span<const request_result> results = {};
  std::span<const score_record> scores = {};
  std::span<const rating_record> ratings = {};
  std::span<const served_model_info> served_models = {};
  std::int64_t made_unix_ms = 0;
  std::string title = "Evaluation report";
};

namespace report_html_detail {

using report_detail::escape_html;
using report_detail::fixed_text;
using report_detail::number_text;
using report_detail::significant_text;

/// 1185376 -> "1,185,376".
inline std::string grouped(std::uint64_t value) {
  std::string digits = std::to_string(value), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// 1185376 -> "1.13 MiB".
inline std::string bytes_text(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) value /= 1024, ++unit;
  return unit == 0 ? grouped(bytes) + " bytes" : fixed_text(value, 2) + " " + units[unit];
}

inline std::string usd(double value) { return "$" + significant_text(value, 4); }

/// A JSON value as a person reads it: text without quotes, numbers short.
inline std::string plain(const boost::json::value& value) {
  if (value.is_string()) return std::string(value.get_string());
  if (value.is_double()) return number_text(value.get_double());
  return boost::json::serialize(value);
}

/// The plan's sampling under the candidate's, as "temperature 0.7, top_p 0.9".
inline std::string sampling_text(const evaluation_plan& plan, const evaluation_candidate& candidate) {
  boost::json::object merged = plan.sampling;
  for (const auto& [key, value] : candidate.sampling) merged[key] = value;
  std::string out;
  for (const auto& [key, value] : merged) {
    if (!out.empty()) out += ", ";
    out += std::string(key) + " " + plain(value);
  }
  return out.empty() ? "defaults" : out;
}

inline std::string price_text(const evaluation_price& price) {
  if (price.self_hosted())
    return usd(price.instance_per_hour) + " / hour at " + number_text(price.utilization * 100) + "% utilisation";
  return usd(price.input_per_1k) + " / 1K input, " + usd(price.output_per_1k) + " / 1K output tokens";
}

inline std::string td(std::string_view text, std::string_view css_class = {}) {
  return css_class.empty() ? "<td>" + escape_html(text) + "</td>"
                           : "<td class=\"" + std::string(css_class) + "\">" + escape_html(text) + "</td>";
}

inline std::string number_td(std::string_view text) { return td(text, "num"); }

inline std::string th_row(std::span<const std::string> headers) {
  std::string out = "<tr>";
  for (const auto& h : headers) out += "<th scope=\"col\">" + escape_html(h) + "</th>";
  return out + "</tr>\n";
}

/// What a method is called in a table's head.
inline std::string method_title(std::string_view method) {
  if (method == "tfidf") return "TF-IDF cosine";
  if (method == "bleu") return "BLEU";
  if (method == "human") return "people / 10";
  return std::string(method);
}

inline constexpr std::string_view style = R"(body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;
margin:2em auto;max-width:1200px;padding:0 1em;color:#222}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc;padding-bottom:.2em}
.meta{color:#555;margin-top:0}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0;display:block;overflow-x:auto}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.reference td:first-child{font-weight:bold}
figure{margin:1.5em 0;overflow-x:auto}figcaption{color:#555;font-size:.9em;max-width:60em}
svg.plot{font-size:11px;background:#fff}svg.plot .title{font-size:14px;font-weight:bold}
.note{background:#fff8e1;border-left:4px solid #f0c000;padding:.5em 1em}
footer{color:#666;font-size:.85em;margin-top:3em}
)";

}  // namespace report_html_detail

/// The report as one HTML page.
inline std::string render_report_html(const report_input& in) {
  using namespace report_html_detail;
  const evaluation_plan& plan = in.plan;
  const evaluation_summary& summary = in.summary;

  std::vector<std::string> names;  // candidates in the plan's order: their colour everywhere
  std::map<std::string, std::size_t, std::less<>> index;
  for (const auto& c : plan.candidates) index.emplace(c.name, names.size()), names.push_back(c.name);
  for (const auto& c : summary.candidates)
    if (!index.contains(c.candidate)) index.emplace(c.candidate, names.size()), names.push_back(c.candidate);
  std::map<std::string, std::string, std::less<>> candidate_of_key;
  for (const auto& r : in.results) candidate_of_key.emplace(r.request.key, r.request.candidate);
  const auto candidate_index = [&](std::string_view key) -> std::optional<std::size_t> {
    const auto c = candidate_of_key.find(key);
    if (c == candidate_of_key.end()) return std::nullopt;
    const auto i = index.find(c->second);
    return i == index.end() ? std::nullopt : std::optional(i->second);
  };

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
                     escape_html(in.title) + "</title>\n<style>\n" + std::string(style) + "</style>\n</head>\n<body>\n";
  html += "<h1>" + escape_html(in.title) + "</h1>\n<p class=\"meta\">Made " +
          escape_html(report_detail::utc_text(in.made_unix_ms)) + ". Reference: <strong>" + escape_html(plan.reference) +
          "</strong>. " + std::to_string(plan.prompts.size()) + " prompts, " + std::to_string(plan.repetitions) +
          " repetitions each, " + std::to_string(plan.concurrency) + " requests in flight at most.";
  if (plan.schedule.enabled())
    html += " Latency schedule: " + std::to_string(plan.schedule.requests) + " requests per candidate every " +
            number_text(plan.schedule.every_seconds) + " s for " + number_text(plan.schedule.duration_seconds) + " s.";
  html += "</p>\n";

  // ---- the candidates ----
  html += "<h2>Candidates</h2>\n<table class=\"candidates\">\n";
  const std::vector<std::string> candidate_columns = {"Candidate", "Served by", "Model", "Sampling", "Quantisation",
                                                      "Parameters", "File size", "Memory in use", "Price"};
  html += th_row(candidate_columns);
  for (const auto& c : plan.candidates) {
    const served_model_info* served = nullptr;
    for (const auto& s : in.served_models)
      if (s.candidate == c.name) served = &s;
    std::string served_by, model = c.model;
    if (!c.gguf.empty() || served) {
      served_by =
          "the kit: " + (served && !served->engine.empty() ? served->engine : std::string("local llama.cpp engine"));
      if (model.empty()) model = served && !served->path.empty() ? served->path : c.gguf.string();
    } else {
      const auto backend = std::find_if(plan.backends.begin(), plan.backends.end(),
                                        [&](const backend_config& b) { return b.name == c.backend; });
      served_by = c.backend + (backend != plan.backends.end() ? " (" + backend->kind + ")" : std::string());
      if (model.empty() && backend != plan.backends.end()) model = backend->model;
    }
    const bool reference = c.name == plan.reference;
    html += std::string(reference ? "<tr class=\"reference\"" : "<tr") + " data-candidate=\"" + escape_html(c.name) +
            "\">" + td(c.name + (reference ? " (reference)" : "")) + td(served_by) + td(model.empty() ? "-" : model) +
            td(sampling_text(plan, c)) + td(served && !served->quantization.empty() ? served->quantization : "-") +
            number_td(served && served->parameters ? grouped(served->parameters) : "-") +
            number_td(served && served->file_bytes ? bytes_text(served->file_bytes) : "-") +
            number_td(served && served->rss_bytes ? bytes_text(served->rss_bytes) : "-") + td(price_text(c.price)) +
            "</tr>\n";
  }
  html += "</table>\n";

  // ---- the figures ----
  const auto methods = evaluation_methods(plan, summary);
  html += "<h2>Figures</h2>\n<table class=\"summary\">\n";
  std::vector<std::string> summary_columns = {"Candidate",        "Requests",        "Errors",          "Resent",
                                              "Latency p50 ms",   "p90 ms",          "p99 ms",          "TTFT p50 ms",
                                              "ms / token p50",   "Tokens in",       "Tokens out",      "Tokens / s",
                                              "USD / 1K tokens",  "Cost reduction"};
  for (const auto& m : methods) summary_columns.push_back(method_title(m));
  for (const char* column : {"Judge verdicts parsed", "People / 10 (ratings)", "Kit overhead p50 µs"})
    summary_columns.emplace_back(column);
  html += th_row(summary_columns);
  for (const auto& c : summary.candidates) {
    std::string errors = std::to_string(c.errors);
    if (!c.errors_by_kind.empty()) {
      std::string kinds;
      for (const auto& [kind, count] : c.errors_by_kind)
        kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(count);
      errors += " (" + kinds + ")";
    }
    html += std::string(c.candidate == summary.reference ? "<tr class=\"reference\"" : "<tr") + " data-candidate=\"" +
            escape_html(c.candidate) + "\">" + td(c.candidate) + number_td(std::to_string(c.requests)) +
            number_td(errors) + number_td(std::to_string(c.resent)) + number_td(fixed_text(c.latency_p50_ms, 1)) +
            number_td(fixed_text(c.latency_p90_ms, 1)) + number_td(fixed_text(c.latency_p99_ms, 1)) +
            number_td(fixed_text(c.ttft_p50_ms, 1)) + number_td(fixed_text(c.per_token_ms_p50, 2)) +
            number_td(grouped(c.tokens_in)) + number_td(grouped(c.tokens_out)) +
            number_td(fixed_text(c.tokens_per_s, 1)) + number_td(usd(c.cost_per_1k_tokens)) +
            number_td(c.cost_reduction > 0 ? significant_text(c.cost_reduction, 3) + "×" : std::string("-"));
    for (const auto& m : methods) {
      const auto found = c.scores.find(m);
      html += number_td(found == c.scores.end() ? "-" : fixed_text(found->second, 3));
    }
    html +=
        number_td(plan.judges.empty() ? "-" : fixed_text(c.judge_parsed_fraction * 100, 1) + "%") +
        number_td(c.ratings ? fixed_text(c.human_mean, 3) + " (" + std::to_string(c.ratings) + ")" : std::string("-")) +
        number_td(fixed_text(c.overhead_us_p50, 1)) + "</tr>\n";
  }
  html += "</table>\n";

  // ---- the plots ----
  const auto figure = [](std::string svg, std::string_view caption) {
    return "<figure>\n" + svg + "<figcaption>" + escape_html(caption) + "</figcaption>\n</figure>\n";
  };
  const auto per_candidate_boxes = [&](auto value_of) {
    std::vector<svg::box_group> groups;
    for (const auto& name : names) groups.push_back({name, {{}}});
    for (const auto& r : in.results) {
      if (r.request.kind != request_kind::evaluation || !r.ok()) continue;
      const auto i = index.find(r.request.candidate);
      if (i == index.end()) continue;
      if (const std::optional<double> v = value_of(r)) groups[i->second].series[0].push_back(*v);
    }
    return groups;
  };
  const auto per_candidate_bars = [&](auto value_of) {
    std::vector<svg::bar_group> groups;
    for (const auto& c : summary.candidates) groups.push_back({c.candidate, {value_of(c)}});
    return groups;
  };
  html += "<h2>Plots</h2>\n";
  html += "<p>Box plots: the box spans the quartiles, the thick line is the median, the whiskers reach the smallest "
          "and largest value (quantiles by linear interpolation, numpy's default). Hours are UTC.</p>\n";

  {  // scores
    std::vector<std::string> score_methods;
    std::map<std::string, std::vector<std::vector<double>>, std::less<>> values;
    for (const auto& m : methods) score_methods.push_back(m);
    for (const auto& s : in.scores) {
      if (!s.value) continue;
      const auto i = candidate_index(s.request_key);
      if (!i) continue;
      if (!values.contains(s.method) &&
          std::find(score_methods.begin(), score_methods.end(), s.method) == score_methods.end())
        score_methods.push_back(s.method);
      auto& per_candidate = values[s.method];
      per_candidate.resize(names.size());
      per_candidate[*i].push_back(*s.value);
    }
    if (!in.ratings.empty()) score_methods.push_back("human");
    for (const auto& r : in.ratings) {
      const auto i = candidate_index(r.request_key);
      if (!i) continue;
      auto& per_candidate = values["human"];
      per_candidate.resize(names.size());
      per_candidate[*i].push_back(r.score / 10.0);
    }
    std::vector<svg::box_group> groups;
    for (const auto& m : score_methods) {
      const auto found = values.find(m);
      if (found == values.end()) continue;
      groups.push_back({m, found->second});
    }
    html += figure(svg::box_plot({.name = "score-distribution",
                                  .title = "Scores by method and candidate",
                                  .y_label = "score (0 to 1)",
                                  .x_label = "method",
                                  .legend = names,
                                  .y_min = 0,
                                  .y_max = 1},
                                 groups),
                   "Each answer's score against the reference's answer to the same prompt, by method; people's ratings "
                   "are divided by 10. The reference is not scored against itself.");
  }
  html += figure(
      svg::box_plot({.name = "latency", .title = "Latency", .y_label = "ms, send to last byte", .x_label = "candidate"},
                    per_candidate_boxes([](const request_result& r) { return std::optional(r.latency_ms); })),
      "Evaluation requests answered without error.");
  html += figure(svg::box_plot({.name = "per-token-latency", .title = "Latency per output token",
                                .y_label = "ms per token after the first", .x_label = "candidate"},
                               per_candidate_boxes([](const request_result& r) {
                                 const double ms = r.per_token_ms();
                                 return ms > 0 ? std::optional(ms) : std::nullopt;
                               })),
                 "(latency - time to first token) / (output tokens - 1), for answers of two tokens or more.");
  {  // by hour
    std::set<int> hours;
    for (const auto& r : in.results)
      if (r.request.kind == request_kind::evaluation || r.request.kind == request_kind::schedule)
        if (index.contains(r.request.candidate)) hours.insert(report_detail::utc_hour(r.started_unix_ms));
    std::map<int, std::size_t> hour_index;
    std::vector<svg::box_group> latency;
    std::vector<svg::bar_group> errors, availability;
    std::vector<std::vector<std::size_t>> sent, failed;
    for (const int h : hours) {
      const std::string label = (h < 10 ? "0" : "") + std::to_string(h) + ":00";
      hour_index.emplace(h, latency.size());
      latency.push_back({label, std::vector<std::vector<double>>(names.size())});
      errors.push_back({label, {}});
      availability.push_back({label, {}});
      sent.emplace_back(names.size());
      failed.emplace_back(names.size());
    }
    for (const auto& r : in.results) {
      if (r.request.kind != request_kind::evaluation && r.request.kind != request_kind::schedule) continue;
      const auto i = index.find(r.request.candidate);
      if (i == index.end()) continue;
      const std::size_t h = hour_index.at(report_detail::utc_hour(r.started_unix_ms));
      ++sent[h][i->second];
      if (r.ok()) latency[h].series[i->second].push_back(r.latency_ms);
      else ++failed[h][i->second];
    }
    for (std::size_t h = 0; h < errors.size(); ++h) {
      for (std::size_t c = 0; c < names.size(); ++c) {
        errors[h].series.push_back(sent[h][c] ? std::optional(static_cast<double>(failed[h][c])) : std::nullopt);
        availability[h].series.push_back(
            sent[h][c] ? std::optional(1.0 - static_cast<double>(failed[h][c]) / static_cast<double>(sent[h][c]))
                       : std::nullopt);
      }
    }
    html += figure(svg::box_plot({.name = "latency-by-hour", .title = "Latency by hour of day", .y_label = "ms",
                                  .x_label = "UTC hour sent", .legend = names},
                                 latency),
                   "Evaluation and latency-schedule requests answered without error, by the UTC hour they were sent.");
    html += figure(svg::bar_chart({.name = "errors-by-hour",
                                   .title = "Errors by hour of day",
                                   .y_label = "failed requests",
                                   .x_label = "UTC hour sent",
                                   .legend = names,
                                   .whole_numbers = true},
                                  errors),
                   "Evaluation and latency-schedule requests that failed (429, 5xx, other 4xx, timeout, unreachable); "
                   "n/a: none sent that hour.");
    html += figure(svg::bar_chart({.name = "availability-by-hour", .title = "Availability by hour of day",
                                   .y_label = "answered / sent", .x_label = "UTC hour sent", .legend = names, .y_min = 0,
                                   .y_max = 1},
                                  availability),
                   "The share of requests sent in that hour that were answered.");
  }
  html += figure(svg::bar_chart({.name = "tokens-generated", .title = "Tokens generated", .y_label = "output tokens",
                                 .x_label = "candidate", .whole_numbers = true},
                                per_candidate_bars([](const candidate_summary& c) {
                                  return std::optional(static_cast<double>(c.tokens_out));
                                })),
                 "Output tokens over the evaluation's requests, as the backends counted them.");
  html += figure(
      svg::bar_chart(
          {.name = "cost-per-1k-tokens", .title = "Cost per 1K tokens", .y_label = "USD", .x_label = "candidate"},
          per_candidate_bars([](const candidate_summary& c) { return std::optional(c.cost_per_1k_tokens); })),
      "API models: their input and output prices weighted by the tokens sent and received. Self-hosted models: "
      "the instance's price per hour over the tokens per second measured in this run, at its utilisation.");
  html += figure(svg::bar_chart({.name = "cost-reduction", .title = "Cost reduction against the reference",
                                 .y_label = "times cheaper", .x_label = "candidate"},
                                per_candidate_bars([](const candidate_summary& c) {
                                  return c.cost_reduction > 0 ? std::optional(c.cost_reduction) : std::nullopt;
                                })),
                 "The reference's cost per 1K tokens divided by the candidate's; n/a where either is 0.");

  html += "<h2>Agreement with people</h2>\n";
  if (summary.agreement.empty()) {
    html += "<p class=\"note\" data-note=\"agreement\">Nobody rated answers in this run, so no method's ranking of the "
            "candidates could be compared with people's.</p>\n";
  } else {
    std::vector<svg::bar_group> groups;
    html += "<table class=\"agreement\">\n";
    const std::vector<std::string> agreement_columns = {"Method", "Spearman's rank correlation",
                                                        "Bottom-k Jaccard index", "k"};
    html += th_row(agreement_columns);
    for (const auto& a : summary.agreement) {
      groups.push_back({a.method, {a.spearman, a.bottom_k_jaccard}});
      html += "<tr data-method=\"" + escape_html(a.method) + "\">" + td(method_title(a.method)) +
              number_td(fixed_text(a.spearman, 3)) + number_td(fixed_text(a.bottom_k_jaccard, 3)) +
              number_td(std::to_string(a.k)) + "</tr>\n";
    }
    html += "</table>\n";
    html += figure(svg::bar_chart({.name = "agreement",
                                   .title = "Agreement with people's ranking",
                                   .y_label = "agreement",
                                   .x_label = "method",
                                   .legend = {"Spearman", "bottom-k Jaccard"},
                                   .y_min = -1,
                                   .y_max = 1},
                                  groups),
                   "How each automatic method ranks the candidates against the ranking by people's mean rating: "
                   "Spearman's rank correlation (-1 to 1) and the Jaccard index of the k worst candidates (0 to 1).");
  }
  html += "<footer>Made by llmgate's evaluation kit. The figures are also in summary.csv, results.csv, scores.csv, "
          "ratings.csv, agreement.csv and evaluation.jsonl beside this page.</footer>\n</body>\n</html>\n";
  return html;
}

/// The files a run leaves in `directory` (created if absent): report.html,
/// results.csv, scores.csv, ratings.csv, summary.csv, agreement.csv and
/// evaluation.jsonl (the JSON lines). Returns the report's absolute path.
/// Throws llmgate::error (io_failure) naming a file it cannot write.
inline std::filesystem::path write_report_files(const std::filesystem::path& directory, const report_input& in) {
  std::error_code failed;
  std::filesystem::create_directories(directory, failed);
  if (failed) throw error(errc::io_failure, "cannot create " + directory.string() + ": " + failed.message());
  write_report_file(directory / "results.csv", results_csv(in.results));
  write_report_file(directory / "scores.csv", scores_csv(in.scores, in.results));
  write_report_file(directory / "ratings.csv", ratings_csv(in.ratings, in.results));
  write_report_file(directory / "summary.csv", summary_csv(in.plan, in.summary));
  write_report_file(directory / "agreement.csv", agreement_csv(in.summary));
  write_report_file(directory / "evaluation.jsonl", evaluation_json_lines(in.plan, in.summary));
  const std::filesystem::path report = directory / "report.html";
  write_report_file(report, render_report_html(in));
  return std::filesystem::absolute(report);
}

}  // namespace llmgate::inline v0
