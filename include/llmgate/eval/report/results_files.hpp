// results_files: an evaluation run's figures as files for other tools: CSV
// (RFC 4180: fields with a comma, quote, CR or LF quoted, quotes doubled,
// rows ending CRLF) with one row per request (results.csv), per score
// (scores.csv), per rating (ratings.csv), per candidate (summary.csv) and
// per method's agreement with people (agreement.csv); and the JSON line per
// candidate that scripts/run evaluate prints:
//
//   {"bench":"evaluation","model":..,"requests":..,"errors":..,"latency_p50_ms":..,
//    "ttft_p50_ms":..,"tokens_per_s":..,"cost_per_1k_tokens":..,"tfidf":..,"bleu":..,
//    "embedding":..,"sem_bleu":..,"judge_parsed_fraction":..,
//    then "embedding:<name>", "sem_bleu:<name>" for the plan's other embedders,
//    each judge's method ("judge:<kind>", as judge.hpp names it), "human",
//    "ratings", "resent", "overhead_us_p50"}
//
// "embedding" and "sem_bleu" are the plan's first embedder's. A method the
// plan does not run, or that scored none of the candidate's answers (the
// reference's own, for one), is null; so is judge_parsed_fraction without
// judges and human without ratings. Numbers are written in their shortest
// form that reads back to the same double ("0.5", not "5E-1").
#pragma once

#include <algorithm>     // std::find
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint64_t
#include <filesystem>    // std::filesystem::path, rename
#include <fstream>       // std::ofstream
#include <functional>    // std::less
#include <map>           // std::map
#include <optional>      // std::optional
#include <set>           // std::set
#include <span>          // std::span
#include <string>        // std::string, std::to_string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code
#include <utility>       // std::move
#include <vector>        // std::vector

#include <boost/json/object.hpp>     // boost::json::object
#include <boost/json/serialize.hpp>  // boost::json::serialize (strings)
#include <boost/json/value.hpp>      // boost::json::value

#include "llmgate/error.hpp"                           // llmgate::error, errc
#include "llmgate/eval/detail/report_text.hpp"         // number_text, utc_text
#include "llmgate/eval/plan/evaluation_plan.hpp"       // evaluation_plan, judge_kind
#include "llmgate/eval/report/evaluation_summary.hpp"  // evaluation_summary, candidate_summary
#include "llmgate/eval/score/judge_templates.hpp"      // judge_method
#include "llmgate/eval/run/run_records.hpp"            // request_result, score_record, rating_record

namespace llmgate::inline v0 {

namespace results_detail {

using report_detail::csv_row;
using report_detail::number_text;

inline std::string optional_number(const std::optional<double>& value) { return value ? number_text(*value) : ""; }

/// Characters of UTF-8 text (bytes that do not continue a character).
inline std::size_t utf8_characters(std::string_view text) {
  std::size_t count = 0;
  for (const unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

inline std::map<std::string, std::string, std::less<>> candidates_by_key(std::span<const request_result> results) {
  std::map<std::string, std::string, std::less<>> by_key;
  for (const auto& r : results) by_key.emplace(r.request.key, r.request.candidate);
  return by_key;
}

inline std::string candidate_of(const std::map<std::string, std::string, std::less<>>& by_key, std::string_view key) {
  const auto found = by_key.find(key);
  return found == by_key.end() ? std::string() : found->second;
}


/// A JSON value as one line, numbers in their shortest round-trip form
/// (Boost.JSON 1.81 writes 0.5 as "5E-1"); NaN and infinities as null.
inline std::string json_text(const boost::json::value& value) {
  switch (value.kind()) {
    case boost::json::kind::double_: return report_detail::number_text(value.get_double());
    case boost::json::kind::object: {
      std::string out = "{";
      for (const auto& [key, member] : value.get_object()) {
        if (out.size() > 1) out += ',';
        out += boost::json::serialize(boost::json::string_view(key)) + ":" + json_text(member);
      }
      return out + "}";
    }
    case boost::json::kind::array: {
      std::string out = "[";
      for (const auto& element : value.get_array()) {
        if (out.size() > 1) out += ',';
        out += json_text(element);
      }
      return out + "]";
    }
    default: return boost::json::serialize(value);
  }
}

}  // namespace results_detail

namespace results_detail {

/// The methods the plan runs, in its order: its scorers ("embedding" and
/// "sem_bleu" standing for every embedder's, as answer_scores.hpp reads
/// them), then its judges.
inline std::vector<std::string> plan_methods(const evaluation_plan& plan) {
  std::vector<std::string> methods;
  const auto add = [&](std::string method) {
    if (std::find(methods.begin(), methods.end(), method) == methods.end()) methods.push_back(std::move(method));
  };
  for (const auto& scorer : plan.scorers) {
    if (scorer == "embedding" || scorer == "sem_bleu") {
      for (const auto& embedder : plan.embedders) add(scorer + ":" + embedder.name);
    } else {
      add(scorer);
    }
  }
  for (std::size_t j = 0; j < plan.judges.size(); ++j) add(judge_method(plan, j));
  return methods;
}

}  // namespace results_detail

/// Every scoring method of a run: the plan's (results_detail::plan_methods),
/// then any other the summary holds, by name.
inline std::vector<std::string> evaluation_methods(const evaluation_plan& plan, const evaluation_summary& summary) {
  std::vector<std::string> methods = results_detail::plan_methods(plan);
  std::set<std::string> others;
  for (const auto& candidate : summary.candidates)
    for (const auto& [method, mean] : candidate.scores)
      if (std::find(methods.begin(), methods.end(), method) == methods.end()) others.insert(method);
  methods.insert(methods.end(), others.begin(), others.end());
  return methods;
}

/// results.csv: one row per request, in the order given.
inline std::string results_csv(std::span<const request_result> results) {
  using namespace results_detail;
  const std::vector<std::string> header = {
      "key",          "kind",        "candidate",    "prompt",   "repetition",  "started_unix_ms", "started_utc",
      "latency_ms",   "ttft_ms",     "per_token_ms", "tokens_in", "tokens_out", "response_chars",  "error",
      "http_status",  "error_message", "attempts",   "overhead_us", "response"};
  std::string out = csv_row(header);
  for (const auto& r : results) {
    const std::vector<std::string> row = {r.request.key,
                                          std::string(to_string(r.request.kind)),
                                          r.request.candidate,
                                          r.request.prompt < 0 ? "" : std::to_string(r.request.prompt),
                                          std::to_string(r.request.repetition),
                                          std::to_string(r.started_unix_ms),
                                          report_detail::utc_text(r.started_unix_ms),
                                          number_text(r.latency_ms),
                                          number_text(r.ttft_ms),
                                          number_text(r.per_token_ms()),
                                          std::to_string(r.tokens_in),
                                          std::to_string(r.tokens_out),
                                          std::to_string(utf8_characters(r.response)),
                                          std::string(to_string(r.error)),
                                          r.http_status ? std::to_string(r.http_status) : "",
                                          r.error_message,
                                          std::to_string(r.attempts),
                                          number_text(r.overhead_us),
                                          r.response};
    out += csv_row(row);
  }
  return out;
}

/// scores.csv: one row per score, with the candidate whose answer it is
/// (from `results`); an unparsed judge verdict has an empty value.
inline std::string scores_csv(std::span<const score_record> scores, std::span<const request_result> results) {
  using namespace results_detail;
  const auto by_key = candidates_by_key(results);
  const std::vector<std::string> header = {"request_key", "candidate", "method", "value", "detail"};
  std::string out = csv_row(header);
  for (const auto& s : scores) {
    const std::vector<std::string> row = {s.request_key, candidate_of(by_key, s.request_key), s.method,
                                          optional_number(s.value), s.detail};
    out += csv_row(row);
  }
  return out;
}

/// ratings.csv: one row per rating, with the candidate rated.
inline std::string ratings_csv(std::span<const rating_record> ratings, std::span<const request_result> results) {
  using namespace results_detail;
  const auto by_key = candidates_by_key(results);
  const std::vector<std::string> header = {"rater", "request_key", "candidate", "score", "at_unix_ms"};
  std::string out = csv_row(header);
  for (const auto& r : ratings) {
    const std::vector<std::string> row = {r.rater, r.request_key, candidate_of(by_key, r.request_key),
                                          std::to_string(r.score), std::to_string(r.at_unix_ms)};
    out += csv_row(row);
  }
  return out;
}

/// summary.csv: one row per candidate; one column per scoring method
/// (evaluation_methods), empty where the method scored none of its answers.
inline std::string summary_csv(const evaluation_plan& plan, const evaluation_summary& summary) {
  using namespace results_detail;
  const auto methods = evaluation_methods(plan, summary);
  std::vector<std::string> header = {"candidate",       "reference",      "requests",       "errors",
                                     "errors_by_kind",  "resent",         "latency_p50_ms", "latency_p90_ms",
                                     "latency_p99_ms",  "ttft_p50_ms",    "per_token_ms_p50", "tokens_in",
                                     "tokens_out",      "tokens_per_s",   "cost_per_1k_tokens", "cost_reduction"};
  header.insert(header.end(), methods.begin(), methods.end());
  for (const char* column : {"judge_parsed_fraction", "human_mean", "ratings", "overhead_us_p50"})
    header.emplace_back(column);
  std::string out = csv_row(header);
  for (const auto& c : summary.candidates) {
    std::string by_kind;
    for (const auto& [kind, count] : c.errors_by_kind) {
      if (!by_kind.empty()) by_kind += ';';
      by_kind += kind + ":" + std::to_string(count);
    }
    std::vector<std::string> row = {c.candidate,
                                    c.candidate == summary.reference ? "true" : "false",
                                    std::to_string(c.requests),
                                    std::to_string(c.errors),
                                    by_kind,
                                    std::to_string(c.resent),
                                    number_text(c.latency_p50_ms),
                                    number_text(c.latency_p90_ms),
                                    number_text(c.latency_p99_ms),
                                    number_text(c.ttft_p50_ms),
                                    number_text(c.per_token_ms_p50),
                                    std::to_string(c.tokens_in),
                                    std::to_string(c.tokens_out),
                                    number_text(c.tokens_per_s),
                                    number_text(c.cost_per_1k_tokens),
                                    number_text(c.cost_reduction)};
    for (const auto& method : methods) {
      const auto found = c.scores.find(method);
      row.push_back(found == c.scores.end() ? "" : number_text(found->second));
    }
    row.push_back(number_text(c.judge_parsed_fraction));
    row.push_back(c.ratings ? number_text(c.human_mean) : "");
    row.push_back(std::to_string(c.ratings));
    row.push_back(number_text(c.overhead_us_p50));
    out += csv_row(row);
  }
  return out;
}

/// agreement.csv: each automatic method's ranking against the people's.
inline std::string agreement_csv(const evaluation_summary& summary) {
  using namespace results_detail;
  const std::vector<std::string> header = {"method", "k", "bottom_k_jaccard", "spearman"};
  std::string out = csv_row(header);
  for (const auto& a : summary.agreement) {
    const std::vector<std::string> row = {a.method, std::to_string(a.k), number_text(a.bottom_k_jaccard),
                                          number_text(a.spearman)};
    out += csv_row(row);
  }
  return out;
}

// ---- JSON lines ----

/// The candidate's JSON line as an object, members in the order above.
inline boost::json::object evaluation_json(const evaluation_plan& plan, const candidate_summary& c) {
  const auto methods = results_detail::plan_methods(plan);
  const auto runs = [&](const std::string& method) {
    return std::find(methods.begin(), methods.end(), method) != methods.end();
  };
  // A method the plan runs: its mean, or null where it scored none of the candidate's answers.
  const auto score = [&](const std::string& method) -> boost::json::value {
    const auto found = c.scores.find(method);
    if (!runs(method) || found == c.scores.end()) return nullptr;
    return found->second;
  };
  const auto embedding_method = [&](std::string_view prefix, std::size_t embedder) -> boost::json::value {
    if (embedder >= plan.embedders.size()) return nullptr;
    return score(std::string(prefix) + ":" + plan.embedders[embedder].name);
  };
  boost::json::object line;
  line["bench"] = "evaluation";
  line["model"] = c.candidate;
  line["requests"] = c.requests;
  line["errors"] = c.errors;
  line["latency_p50_ms"] = c.latency_p50_ms;
  line["ttft_p50_ms"] = c.ttft_p50_ms;
  line["tokens_per_s"] = c.tokens_per_s;
  line["cost_per_1k_tokens"] = c.cost_per_1k_tokens;
  line["tfidf"] = score("tfidf");
  line["bleu"] = score("bleu");
  line["embedding"] = embedding_method("embedding", 0);
  line["sem_bleu"] = embedding_method("sem_bleu", 0);
  line["judge_parsed_fraction"] =
      plan.judges.empty() ? boost::json::value(nullptr) : boost::json::value(c.judge_parsed_fraction);
  for (std::size_t e = 1; e < plan.embedders.size(); ++e) {
    for (const std::string_view prefix : {"embedding", "sem_bleu"}) {
      const std::string method = std::string(prefix) + ":" + plan.embedders[e].name;
      if (runs(method)) line[method] = score(method);
    }
  }
  for (std::size_t j = 0; j < plan.judges.size(); ++j) {
    const auto method = judge_method(plan, j);
    line[method] = score(method);
  }
  line["human"] = c.ratings ? boost::json::value(c.human_mean) : boost::json::value(nullptr);
  line["ratings"] = c.ratings;
  line["resent"] = c.resent;
  line["overhead_us_p50"] = c.overhead_us_p50;
  return line;
}

/// The candidate's JSON line, without a newline.
inline std::string evaluation_json_line(const evaluation_plan& plan, const candidate_summary& c) {
  return results_detail::json_text(evaluation_json(plan, c));
}

/// Every candidate's line, in the summary's order, each ending "\n".
inline std::string evaluation_json_lines(const evaluation_plan& plan, const evaluation_summary& summary) {
  std::string out;
  for (const auto& c : summary.candidates) out += evaluation_json_line(plan, c) + "\n";
  return out;
}

/// Writes `text` to `path` through a new file renamed over it, so that a
/// reader never sees half a file. Throws llmgate::error (io_failure) naming the file.
inline void write_report_file(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::path partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw error(errc::io_failure, "cannot write " + partial.string());
  }
  std::error_code failed;
  std::filesystem::rename(partial, path, failed);
  if (failed)
    throw error(errc::io_failure,
                "cannot rename " + partial.string() + " to " + path.string() + ": " + failed.message());
}

}  // namespace llmgate::inline v0
