// The replay's outputs: a table for people, a CSV and SVG plots for
// later, one JSON line per configuration for machines, each
// configuration's per-request records, and a sample of served hits for
// people to review.
#pragma once

#include <algorithm>    // std::min, std::max, std::ranges::find, std::ranges::sort, std::sort
#include <cmath>        // std::floor, std::ceil, std::isnan
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint64_t
#include <cstdio>       // std::snprintf
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ofstream
#include <optional>     // std::optional
#include <ostream>      // std::ostream
#include <random>       // std::mt19937_64
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair, std::swap
#include <vector>       // std::vector

#include "experiment.hpp"

namespace replay {

namespace detail {

// printf into a string of whatever length it takes.
template <class... Args>
std::string format(const char* pattern, Args... args) {
  std::string text(static_cast<std::size_t>(std::snprintf(nullptr, 0, pattern, args...)), '\0');
  std::snprintf(text.data(), text.size() + 1, pattern, args...);
  return text;
}

inline std::string fraction_or_dash(std::optional<double> value, const char* pattern = "%.3f") {
  return value ? format(pattern, *value) : std::string("-");
}

// Text for an SVG or HTML text node.
inline std::string xml_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

// An SVG's opening: its size, a white ground and the title at `left`.
inline void open_svg(std::ostream& out, double width, double height, double left, const std::string& title) {
  out << format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">)",
                width, height)
      << "\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << format(R"(<text x="%g" y="22" font-size="14">%s</text>)", left, xml_escaped(title).c_str()) << '\n';
}

inline std::string fraction_or_null(std::optional<double> value) {
  return value ? format("%.6g", *value) : std::string("null");
}

}  // namespace detail

/// The reference's table, one line per configuration.
inline void print_table(std::ostream& out, std::span<const replay_result> results, double price_per_call) {
  using detail::format;
  out << "policy                          bound  threshold  exact-hit  semantic-hit    hit  precision  sem-prec  recall  vetoes"
         "  right-vetoes  p50-us  p90-us  p95-us  p99-us  calls-avoided  usd-saved\n";
  for (const auto& r : results) {
    out << format(
        "%-31s %5s  %9.3f  %8.1f%%  %11.1f%%  %5.1f%%  %9s  %8s  %6s  %6zu  %12zu  %6.1f  %6.1f  %6.1f  %6.1f  "
        "%13zu  %9.2f\n",
        r.family().c_str(), r.error_bound ? format("%.2f", *r.error_bound).c_str() : "-", r.threshold,
        100 * r.share(r.exact_hits), 100 * r.share(r.semantic_hits), 100 * r.share(r.hits()),
        detail::fraction_or_dash(r.precision()).c_str(), detail::fraction_or_dash(r.semantic_precision()).c_str(),
        detail::fraction_or_dash(r.recall()).c_str(), r.vetoes, r.right_vetoes, r.lookup_percentile_us(0.50),
        r.lookup_percentile_us(0.90),
        r.lookup_percentile_us(0.95), r.lookup_percentile_us(0.99), r.hits(),
        static_cast<double>(r.hits()) * price_per_call);
  }
}

/// The table with every count, as CSV; empty cells where a share is
/// undefined. False when the file could not be written.
inline bool write_csv(const std::filesystem::path& path, std::span<const replay_result> results,
                      double price_per_call) {
  std::ofstream out(path);
  out << "policy,error_bound,threshold,requests,exact_hits,semantic_hits,right_hits,right_semantic_hits,"
         "answerable,exact_hit,semantic_hit,hit,precision,semantic_precision,recall,lookup_p50_us,lookup_p90_us,"
         "lookup_p95_us,lookup_p99_us,calls_avoided,usd_saved,explores,vetoes,right_vetoes,feedback_reports,"
         "longest_insert_ms,seconds,learning\n";
  for (const auto& r : results) {
    const auto optional = [](std::optional<double> v) { return v ? detail::format("%.6g", *v) : std::string(); };
    out << r.policy << ',' << optional(r.error_bound) << ','
        << detail::format("%.4g,%zu,%zu,%zu,%zu,%zu,%zu,%.6g,%.6g,%.6g,", r.threshold, r.requests, r.exact_hits,
                          r.semantic_hits, r.right_hits, r.right_semantic_hits, r.answerable,
                          r.share(r.exact_hits), r.share(r.semantic_hits), r.share(r.hits()))
        << optional(r.precision()) << ',' << optional(r.semantic_precision()) << ',' << optional(r.recall()) << ','
        << detail::format("%.2f,%.2f,%.2f,%.2f,%zu,%.4f,%zu,%zu,%zu,%zu,%.1f,%.2f,", r.lookup_percentile_us(0.50),
                          r.lookup_percentile_us(0.90), r.lookup_percentile_us(0.95), r.lookup_percentile_us(0.99),
                          r.hits(), static_cast<double>(r.hits()) * price_per_call, r.explores, r.vetoes,
                          r.right_vetoes, r.feedback_reports, r.longest_insert_us / 1000, r.seconds)
        << (r.learning ? (*r.learning ? "true" : "false") : "") << '\n';
  }
  out.close();
  return !out.fail();
}

/// {"bench":"replay","threshold":t,"policy":...,"exact_hit":x,"semantic_hit":y,"precision":p,
/// "semantic_precision":s,"recall":r,"lookup_p99_us":l}, adaptive thresholds' and the error_bound
/// policy's lines with "error_bound" added, the
/// verifier's ("policy":"verifier", its threshold on the probability) with "learning"; null where
/// undefined.
inline std::string json_line(const replay_result& r) {
  using detail::format;
  std::string line = format(R"({"bench":"replay","threshold":%.4g,"policy":"%s",)", r.threshold, r.policy.c_str());
  if (r.error_bound) line += format(R"("error_bound":%.4g,)", *r.error_bound);
  if (r.learning) line += format(R"("learning":%s,)", *r.learning ? "true" : "false");
  line += format(R"("exact_hit":%.6g,"semantic_hit":%.6g,"precision":)", r.share(r.exact_hits),
                 r.share(r.semantic_hits));
  line += detail::fraction_or_null(r.precision()) + R"(,"semantic_precision":)" +
          detail::fraction_or_null(r.semantic_precision()) + R"(,"recall":)" + detail::fraction_or_null(r.recall());
  line += format(R"(,"lookup_p99_us":%.4g})", r.lookup_percentile_us(0.99));
  return line;
}

/// Precision and hit rate (exact + semantic) against the threshold: the
/// static thresholds as two lines, the adaptive policies as marked points
/// at the threshold each learned, with its error bound written beside it.
/// False when the file could not be written.
inline bool write_svg(const std::filesystem::path& path, const std::string& title,
                      std::span<const replay_result> static_lines,
                      std::span<const replay_result> adaptive_points) {
  using detail::format;
  constexpr double width = 840, height = 460, left = 70, right = 240, top = 40, bottom = 60;
  constexpr double plot_w = width - left - right, plot_h = height - top - bottom;
  double x_min = 1.0;
  for (const auto& r : static_lines) x_min = std::min(x_min, r.threshold);
  for (const auto& r : adaptive_points) x_min = std::min(x_min, r.threshold);
  x_min = std::min(std::floor((x_min - 0.005) * 50) / 50, 0.98);  // down to a multiple of 0.02
  const auto x = [&](double t) { return left + (t - x_min) / (1.0 - x_min) * plot_w; };
  const auto y = [&](double v) { return top + (1.0 - v) * plot_h; };
  const char* const precision_colour = "#1f77b4";
  const char* const hit_colour = "#e6550d";

  std::ofstream out(path);
  detail::open_svg(out, width, height, left, title);
  for (int i = 0; i <= 5; ++i) {  // value grid, every 0.2
    const double v = i / 5.0;
    out << format(
               R"(<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/><text x="%g" y="%.1f" text-anchor="end">%.1f</text>)",
               left, y(v), left + plot_w, y(v), left - 6, y(v) + 4, v)
        << '\n';
  }
  for (double t = x_min; t <= 1.0 + 1e-9; t += 0.02)  // threshold ticks, every 0.02
    out << format(
               R"(<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#ddd"/><text x="%.1f" y="%g" text-anchor="middle">%.2f</text>)",
               x(t), top, x(t), top + plot_h, x(t), top + plot_h + 16, t)
        << '\n';
  out << format(R"(<text x="%g" y="%g" text-anchor="middle">similarity threshold</text>)", left + plot_w / 2,
                height - 18)
      << '\n'
      << format(R"(<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#999" stroke-dasharray="4 3"/>)", left,
                y(0.95), left + plot_w, y(0.95))
      << '\n';

  const auto series = [&](const char* colour, auto value) {
    std::string points;
    for (const auto& r : static_lines)
      if (const auto v = value(r)) points += format("%.1f,%.1f ", x(r.threshold), y(*v));
    out << format(R"(<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>)", colour, points.c_str())
        << '\n';
    for (const auto& r : static_lines)
      if (const auto v = value(r))
        out << format(R"(<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>)", x(r.threshold), y(*v), colour) << '\n';
    for (const auto& r : adaptive_points)
      if (const auto v = value(r))
        out << format(
                   R"svg(<rect x="%.1f" y="%.1f" width="9" height="9" fill="none" stroke="%s" stroke-width="2" )svg"
                   R"svg(transform="rotate(45 %.1f %.1f)"/>)svg",
                   x(r.threshold) - 4.5, y(*v) - 4.5, colour, x(r.threshold), y(*v))
            << '\n';
  };
  series(precision_colour, [](const replay_result& r) { return r.precision(); });
  series(hit_colour, [](const replay_result& r) { return std::optional(r.share(r.hits())); });

  const double legend_x = left + plot_w + 30;
  const auto legend = [&](double row, const char* colour, const char* text, bool diamond) {
    const double ly = top + 10 + row * 20;
    if (diamond)
      out << format(
          R"svg(<rect x="%g" y="%g" width="9" height="9" fill="none" stroke="%s" stroke-width="2" transform="rotate(45 %g %g)"/>)svg",
          legend_x + 5.5, ly - 4.5, colour, legend_x + 10, ly);
    else
      out << format(R"(<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"/>)", legend_x, ly,
                    legend_x + 20, ly, colour);
    out << format(R"(<text x="%g" y="%g">%s</text>)", legend_x + 26, ly + 4, text) << '\n';
  };
  legend(0, precision_colour, "precision, static", false);
  legend(1, hit_colour, "hit rate, static", false);
  legend(2, precision_colour, "precision, adaptive", true);
  legend(3, hit_colour, "hit rate, adaptive", true);
  // The adaptive points often crowd together near 1.0: their numbers go here rather than beside them.
  const auto note = [&](double row, const std::string& text) {
    out << format(R"(<text x="%g" y="%g" font-size="10">%s</text>)", legend_x, top + 100 + row * 14, text.c_str())
        << '\n';
  };
  note(0, "dashed: precision 0.95");
  note(1.5, "adaptive, by error bound:");
  for (std::size_t i = 0; i < adaptive_points.size(); ++i) {
    const auto& r = adaptive_points[i];
    note(2.5 + static_cast<double>(i),
         format("e=%.2f: t=%.3f, hit %.1f%%, p=%s", r.error_bound.value_or(0), r.threshold,
                100 * r.share(r.hits()), detail::fraction_or_dash(r.precision()).c_str()));
  }
  out << "</svg>\n";
  out.close();
  return !out.fail();
}

namespace detail {

// A CSV field: quoted, with its quotes doubled (RFC 4180).
inline std::string csv_field(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

inline std::string number_or_empty(float value) {
  return std::isnan(value) ? std::string() : format("%.4f", static_cast<double>(value));
}

inline std::string_view text_of(const replay_stream& stream, std::uint32_t index) {
  return index == no_request ? std::string_view() : std::string_view(stream.requests[index].text);
}

}  // namespace detail

/// One configuration's per-request records: each request, the stored
/// request behind its decision, their similarity, the verifier's
/// probability (empty for the other policies), the decision and whether it
/// was right (see request_record). False when the file could not be written.
inline bool write_records_csv(const std::filesystem::path& path, const replay_stream& stream,
                              const replay_result& r) {
  std::ofstream out(path);
  out << "request_index,request,stored_index,stored_request,similarity,probability,decision,right\n";
  for (std::size_t i = 0; i < r.records.size(); ++i) {
    const request_record& record = r.records[i];
    out << i << ',' << detail::csv_field(stream.requests[i].text) << ','
        << (record.stored == no_request ? std::string() : std::to_string(record.stored)) << ','
        << detail::csv_field(detail::text_of(stream, record.stored)) << ','
        << detail::number_or_empty(record.similarity) << ',' << detail::number_or_empty(record.probability) << ','
        << name_of(record.made) << ',' << (record.right ? 1 : 0) << '\n';
  }
  out.close();
  return !out.fail();
}

/// Up to `count` of a replay's served semantic hits (request indices, in
/// stream order), drawn by mt19937_64 seeded with `seed` (indices taken
/// modulo, the same with every standard library).
inline std::vector<std::uint32_t> sample_hits(const replay_result& r, std::size_t count, std::uint64_t seed) {
  std::vector<std::uint32_t> hits;
  for (std::size_t i = 0; i < r.records.size(); ++i)
    if (r.records[i].made == decision::hit) hits.push_back(static_cast<std::uint32_t>(i));
  std::mt19937_64 random(seed);
  const std::size_t n = std::min(count, hits.size());
  for (std::size_t i = 0; i < n; ++i) std::swap(hits[i], hits[i + random() % (hits.size() - i)]);
  hits.resize(n);
  std::sort(hits.begin(), hits.end());
  return hits;
}

/// A sample of each given configuration's served semantic hits for review
/// by people: a CSV, and a self-contained HTML page with each request and
/// the stored request whose answer it was served side by side. False when
/// a file could not be written.
inline bool write_hit_sample(const std::filesystem::path& csv_path, const std::filesystem::path& html_path,
                             const std::string& title, const replay_stream& stream,
                             std::span<const replay_result* const> configurations, std::size_t count,
                             std::uint64_t seed) {
  using detail::format;
  using detail::xml_escaped;
  std::ofstream csv(csv_path), html(html_path);
  csv << "configuration,request_index,request,stored_index,stored_request,right,similarity,probability\n";
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << xml_escaped(title)
       << "</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;width:100%;"
          "margin-bottom:2em}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}"
          "th{background:#eee}tr.right td.verdict{background:#d9f2d9}tr.wrong td.verdict{background:#f8d0d0}"
          "tr.wrong{background:#fff4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}</style>"
          "</head><body>\n<h1>"
       << xml_escaped(title) << "</h1>\n"
       << format("<p>Served semantic hits drawn at random (mt19937_64 seed %llu), up to %zu per configuration. "
                 "<i>right</i>: the stored request's answer (its duplicate cluster) is the request's.</p>\n",
                 static_cast<unsigned long long>(seed), count);
  for (const replay_result* r : configurations) {
    const auto chosen = sample_hits(*r, count, seed);
    std::size_t right = 0;
    for (const std::uint32_t i : chosen) right += r->records[i].right;
    html << "<h2>" << xml_escaped(r->configuration()) << "</h2>\n"
         << format("<p>%zu of its %zu semantic hits (semantic precision %s); in the sample %zu right, %zu wrong.</p>\n",
                   chosen.size(), r->semantic_hits, detail::fraction_or_dash(r->semantic_precision()).c_str(), right,
                   chosen.size() - right)
         << "<table><tr><th>#</th><th>request</th><th>stored request (its answer served)</th><th>verdict</th>"
            "<th>similarity</th><th>probability</th></tr>\n";
    for (const std::uint32_t i : chosen) {
      const request_record& record = r->records[i];
      const std::string request(stream.requests[i].text), stored(detail::text_of(stream, record.stored));
      csv << detail::csv_field(r->configuration()) << ',' << i << ',' << detail::csv_field(request) << ','
          << record.stored << ',' << detail::csv_field(stored) << ',' << (record.right ? 1 : 0) << ','
          << detail::number_or_empty(record.similarity) << ',' << detail::number_or_empty(record.probability)
          << '\n';
      html << "<tr class=\"" << (record.right ? "right" : "wrong") << "\"><td class=\"n\">" << i << "</td><td>"
           << xml_escaped(request) << "</td><td>" << xml_escaped(stored) << "</td><td class=\"verdict\">"
           << (record.right ? "right" : "wrong") << "</td><td class=\"n\">"
           << detail::number_or_empty(record.similarity) << "</td><td class=\"n\">"
           << detail::number_or_empty(record.probability) << "</td></tr>\n";
    }
    html << "</table>\n";
  }
  html << "</body></html>\n";
  csv.close();
  html.close();
  return !csv.fail() && !html.fail();
}

/// Precision against total hit rate (exact + semantic), one curve per
/// policy family (see replay_result::family): the static similarity
/// thresholds, the adaptive threshold by error bound, the verifier by
/// probability threshold or by bound; each point labelled with its
/// setting. False when the file could not be written.
inline bool write_curves_svg(const std::filesystem::path& path, const std::string& title,
                             std::span<const replay_result> results, double target_precision) {
  using detail::format;
  constexpr double width = 900, height = 520, left = 70, right = 260, top = 40, bottom = 60;
  constexpr double plot_w = width - left - right, plot_h = height - top - bottom;
  static constexpr const char* colours[] = {"#1f77b4", "#e6550d", "#2ca02c", "#9467bd",
                                            "#d62728", "#8c564b", "#e377c2", "#7f7f7f"};
  // Families in order of first appearance, each with its points by hit rate.
  std::vector<std::pair<std::string, std::vector<const replay_result*>>> families;
  double hit_min = 1, hit_max = 0, precision_min = 1;
  for (const auto& r : results) {
    if (!r.precision()) continue;
    auto at = std::ranges::find(families, r.family(), [](const auto& f) { return f.first; });
    if (at == families.end()) at = families.insert(families.end(), {r.family(), {}});
    at->second.push_back(&r);
    hit_min = std::min(hit_min, r.share(r.hits()));
    hit_max = std::max(hit_max, r.share(r.hits()));
    precision_min = std::min(precision_min, *r.precision());
  }
  for (auto& [name, points] : families)
    std::ranges::sort(points, {}, [](const replay_result* r) { return r->share(r->hits()); });
  // Axes on multiples of 0.05, the precision axis down to 0.9 at least.
  const double x_min = std::floor(hit_min * 20) / 20, x_max = std::max(x_min + 0.05, std::ceil(hit_max * 20) / 20);
  const double y_min = std::min(0.9, std::floor(precision_min * 20) / 20);
  const auto x = [&](double v) { return left + (v - x_min) / (x_max - x_min) * plot_w; };
  const auto y = [&](double v) { return top + (1.0 - v) / (1.0 - y_min) * plot_h; };

  std::ofstream out(path);
  detail::open_svg(out, width, height, left, title);
  for (double v = y_min; v <= 1.0 + 1e-9; v += 0.05)
    out << format(
               R"(<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/><text x="%g" y="%.1f" text-anchor="end">%.2f</text>)",
               left, y(v), left + plot_w, y(v), left - 6, y(v) + 4, v)
        << '\n';
  const double x_step = x_max - x_min > 0.3 ? 0.1 : 0.05;
  for (double v = x_min; v <= x_max + 1e-9; v += x_step)
    out << format(
               R"(<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#ddd"/><text x="%.1f" y="%g" text-anchor="middle">%.0f%%</text>)",
               x(v), top, x(v), top + plot_h, x(v), top + plot_h + 16, 100 * v)
        << '\n';
  out << format(R"(<text x="%g" y="%g" text-anchor="middle">total hit rate (exact + semantic)</text>)",
                left + plot_w / 2, height - 18)
      << '\n'
      << format(R"svg(<text x="16" y="%g" text-anchor="middle" transform="rotate(-90 16 %g)">precision</text>)svg",
                top + plot_h / 2, top + plot_h / 2)
      << '\n'
      << format(R"(<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#999" stroke-dasharray="4 3"/>)", left,
                y(target_precision), left + plot_w, y(target_precision))
      << '\n';
  const double legend_x = left + plot_w + 20;
  for (std::size_t f = 0; f < families.size(); ++f) {
    const auto& [name, points] = families[f];
    const char* colour = colours[f % std::size(colours)];
    const bool dashed = name.find("no learning") != std::string::npos;
    std::string line;
    for (const replay_result* r : points) line += format("%.1f,%.1f ", x(r->share(r->hits())), y(*r->precision()));
    out << format(R"(<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>)", colour,
                  dashed ? R"( stroke-dasharray="6 3")" : "", line.c_str())
        << '\n';
    for (const replay_result* r : points) {
      const double px = x(r->share(r->hits())), py = y(*r->precision());
      out << format(R"(<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>)", px, py, colour)
          << format(R"(<text x="%.1f" y="%.1f" font-size="9" fill="%s">%s</text>)", px + 5, py - 5, colour,
                    (r->error_bound ? format("e%.2f", *r->error_bound) : format("%.2f", r->threshold)).c_str())
          << '\n';
    }
    const double ly = top + 10 + static_cast<double>(f) * 20;
    out << format(R"(<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"%s/>)", legend_x, ly,
                  legend_x + 20, ly, colour, dashed ? R"( stroke-dasharray="6 3")" : "")
        << format(R"(<text x="%g" y="%g">%s</text>)", legend_x + 26, ly + 4, detail::xml_escaped(name).c_str())
        << '\n';
  }
  out << format(R"(<text x="%g" y="%g" font-size="10">dashed grey: precision %.2f</text>)", legend_x,
                top + 30 + static_cast<double>(families.size()) * 20, target_precision)
      << format(R"(<text x="%g" y="%g" font-size="10">labels: threshold, or e = error bound</text>)", legend_x,
                top + 44 + static_cast<double>(families.size()) * 20)
      << "\n</svg>\n";
  out.close();
  return !out.fail();
}

}  // namespace replay
