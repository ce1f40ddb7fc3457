// The replay's outputs: a table for people, a CSV and an SVG plot for
// later, one JSON line per threshold line for machines.
#pragma once

#include <algorithm>   // std::min
#include <cmath>       // std::floor
#include <cstddef>     // std::size_t
#include <cstdio>      // std::snprintf
#include <filesystem>  // std::filesystem::path
#include <fstream>     // std::ofstream
#include <optional>    // std::optional
#include <ostream>     // std::ostream
#include <span>        // std::span
#include <string>      // std::string
#include <vector>      // std::vector

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

// Text for an SVG text node.
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

inline std::string fraction_or_null(std::optional<double> value) {
  return value ? format("%.6g", *value) : std::string("null");
}

}  // namespace detail

/// The reference's table, one line per configuration.
inline void print_table(std::ostream& out, std::span<const replay_result> results, double price_per_call) {
  using detail::format;
  out << "policy    bound  threshold  exact-hit  semantic-hit    hit  precision  sem-prec  recall  vetoes"
         "  right-vetoes  p50-us  p90-us  p95-us  p99-us  calls-avoided  usd-saved\n";
  for (const auto& r : results) {
    out << format(
        "%-9s %5s  %9.3f  %8.1f%%  %11.1f%%  %5.1f%%  %9s  %8s  %6s  %6zu  %12zu  %6.1f  %6.1f  %6.1f  %6.1f  "
        "%13zu  %9.2f\n",
        r.policy.c_str(), r.error_bound ? format("%.2f", *r.error_bound).c_str() : "-", r.threshold,
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
         "longest_insert_ms,seconds\n";
  for (const auto& r : results) {
    const auto optional = [](std::optional<double> v) { return v ? detail::format("%.6g", *v) : std::string(); };
    out << r.policy << ',' << optional(r.error_bound) << ','
        << detail::format("%.4g,%zu,%zu,%zu,%zu,%zu,%zu,%.6g,%.6g,%.6g,", r.threshold, r.requests, r.exact_hits,
                          r.semantic_hits, r.right_hits, r.right_semantic_hits, r.answerable,
                          r.share(r.exact_hits), r.share(r.semantic_hits), r.share(r.hits()))
        << optional(r.precision()) << ',' << optional(r.semantic_precision()) << ',' << optional(r.recall()) << ','
        << detail::format("%.2f,%.2f,%.2f,%.2f,%zu,%.4f,%zu,%zu,%zu,%zu,%.1f,%.2f\n", r.lookup_percentile_us(0.50),
                          r.lookup_percentile_us(0.90), r.lookup_percentile_us(0.95), r.lookup_percentile_us(0.99),
                          r.hits(), static_cast<double>(r.hits()) * price_per_call, r.explores, r.vetoes,
                          r.right_vetoes, r.feedback_reports, r.longest_insert_us / 1000, r.seconds);
  }
  out.close();
  return !out.fail();
}

/// {"bench":"replay","threshold":t,"policy":...,"exact_hit":x,"semantic_hit":y,"precision":p,
/// "recall":r,"lookup_p99_us":l}, adaptive lines with "error_bound" added; null where undefined.
inline std::string json_line(const replay_result& r) {
  using detail::format;
  std::string line = format(R"({"bench":"replay","threshold":%.4g,"policy":"%s",)", r.threshold, r.policy.c_str());
  if (r.error_bound) line += format(R"("error_bound":%.4g,)", *r.error_bound);
  line += format(R"("exact_hit":%.6g,"semantic_hit":%.6g,"precision":)", r.share(r.exact_hits),
                 r.share(r.semantic_hits));
  line += detail::fraction_or_null(r.precision()) + R"(,"recall":)" + detail::fraction_or_null(r.recall());
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
  out << format(
             R"(<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">)",
             width, height)
      << "\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << format(R"(<text x="%g" y="22" font-size="14">%s</text>)", left, detail::xml_escaped(title).c_str())
      << '\n';
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

}  // namespace replay
