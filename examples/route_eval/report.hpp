// route_eval's outputs: a table per dataset for people, one CSV of every
// policy, an SVG plot of accuracy against cost per dataset, and JSON lines
// for machines.
#pragma once

#include <algorithm>   // std::sort, std::min, std::max
#include <cmath>       // std::log10, std::pow, std::floor, std::ceil
#include <cstdio>      // std::snprintf
#include <filesystem>  // std::filesystem::path
#include <fstream>     // std::ofstream
#include <ostream>     // std::ostream
#include <string>      // std::string
#include <vector>      // std::vector

#include "evaluation.hpp"

namespace route_eval {

namespace detail {

template <class... Args>
std::string format(const char* pattern, Args... args) {
  std::string text(static_cast<std::size_t>(std::snprintf(nullptr, 0, pattern, args...)), '\0');
  std::snprintf(text.data(), text.size() + 1, pattern, args...);
  return text;
}

inline std::string xml_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  return out;
}

// The policies a table and the JSON lines list: the singles, the
// reference policies, the router's sweep and the chosen points (the
// predictor's and the cascade's curves, a point per lambda, are in the
// CSV and the plot).
inline std::vector<point> listed_points(const dataset_result& r) {
  std::vector<point> points = r.singles;
  for (const auto& p : {r.random, r.cheapest, r.best, r.oracle}) points.push_back(p);
  for (const auto& f : r.families) {
    if (f.chosen.empty()) points.insert(points.end(), f.curve.begin(), f.curve.end());
    points.insert(points.end(), f.chosen.begin(), f.chosen.end());
  }
  return points;
}

// Every policy of a result.
inline std::vector<point> all_points(const dataset_result& r) {
  std::vector<point> points = r.singles;
  for (const auto& p : {r.random, r.cheapest, r.best, r.oracle}) points.push_back(p);
  for (const auto& f : r.families) {
    points.insert(points.end(), f.curve.begin(), f.curve.end());
    points.insert(points.end(), f.chosen.begin(), f.chosen.end());
  }
  return points;
}

}  // namespace detail

inline void print_table(std::ostream& out, const dataset_result& r) {
  using detail::format;
  out << format("\n== %s: %zu evaluated queries, learned from %zu\n", r.name.c_str(), r.evaluated, r.learned_from);
  out << format("%-44s %9s %11s %13s\n", "policy", "accuracy", "cost_usd", "cost_vs_best");
  for (const auto& p : detail::listed_points(r))
    out << format("%-44s %9.4f %11.4f %12.1f%%\n", p.policy.c_str(), p.accuracy, p.cost,
                  100 * p.cost / r.best_single.cost);
  out << format("best single model: %s, accuracy %.4f at $%.4f\n", r.best_single.policy.c_str(),
                r.best_single.accuracy, r.best_single.cost);
  out << format("predictor's Brier score %.4f (base rate %.4f)\n", r.brier, r.base_rate_brier);
  for (const auto& f : r.families) {
    out << format("%s: area under accuracy over log cost, normalised by the oracle's, %.4f; ", f.name.c_str(),
                  f.normalised_auc);
    if (f.cost_to_match)
      out << format("its curve matches the best single model (within 0.5 pt) at %.1f%% of its cost\n",
                    100 * *f.cost_to_match / r.best_single.cost);
    else
      out << "its curve does not match the best single model (within 0.5 pt)\n";
    for (const auto& c : f.chosen)
      out << format("  %-24s chosen on the learning queries: accuracy %+.4f against the best single, %.1f%% of its cost\n",
                    c.policy.c_str(), c.accuracy - r.best_single.accuracy, 100 * c.cost / r.best_single.cost);
  }
}

/// dataset,policy,accuracy,cost_usd,best_single_accuracy,best_single_cost_usd. False when not written.
inline bool write_csv(const std::filesystem::path& path, const std::vector<dataset_result>& results) {
  std::ofstream out(path);
  out << "dataset,policy,accuracy,cost_usd,best_single_accuracy,best_single_cost_usd\n";
  for (const auto& r : results)
    for (const auto& p : detail::all_points(r))
      out << detail::format("%s,\"%s\",%.6f,%.6f,%.6f,%.6f\n", r.name.c_str(), p.policy.c_str(), p.accuracy, p.cost,
                            r.best_single.accuracy, r.best_single.cost);
  out.close();
  return !out.fail();
}

/// {"bench":"routing","dataset":d,"policy":p,"accuracy":a,"cost":c,"best_single_accuracy":b,"best_single_cost":bc}
/// per listed policy; per learned family with chosen points
/// {"bench":"routing_heldout","dataset":d,"policy":f,"cost_to_match":x,"accuracy_minus_best":y,"cost_at_95":z,
///  "accuracy_at_95":w,"cost_to_match_picked_on_eval":v|null,"auc_vs_oracle":u,"brier":b,"base_rate_brier":bb}
/// (costs as ratios to the best single model's), and for the router
/// {"bench":"routing_summary","dataset":d,"cost_to_match_best":x|null,"auc_vs_oracle":y}.
inline std::vector<std::string> json_lines(const dataset_result& r) {
  using detail::format;
  std::vector<std::string> lines;
  for (const auto& p : detail::listed_points(r))
    lines.push_back(format(R"({"bench":"routing","dataset":"%s","policy":"%s","accuracy":%.6g,"cost":%.6g,)"
                           R"("best_single_accuracy":%.6g,"best_single_cost":%.6g})",
                           r.name.c_str(), p.policy.c_str(), p.accuracy, p.cost, r.best_single.accuracy,
                           r.best_single.cost));
  const auto ratio = [&](const std::optional<double>& cost) {
    return cost ? format("%.6g", *cost / r.best_single.cost) : std::string("null");
  };
  for (const auto& f : r.families) {
    if (f.chosen.size() != 2) {
      lines.push_back(format(R"({"bench":"routing_summary","dataset":"%s","cost_to_match_best":%s,"auc_vs_oracle":%.6g})",
                             r.name.c_str(), f.cost_to_match ? format("%.6g", *f.cost_to_match).c_str() : "null",
                             f.normalised_auc));
      continue;
    }
    const auto& match = f.chosen[0];
    const auto& share = f.chosen[1];
    lines.push_back(format(R"({"bench":"routing_heldout","dataset":"%s","policy":"%s","cost_to_match":%.6g,)"
                           R"("accuracy_minus_best":%.6g,"cost_at_95":%.6g,"accuracy_at_95":%.6g,)"
                           R"("cost_to_match_picked_on_eval":%s,"auc_vs_oracle":%.6g,"brier":%.6g,"base_rate_brier":%.6g})",
                           r.name.c_str(), f.name.c_str(), match.cost / r.best_single.cost,
                           match.accuracy - r.best_single.accuracy, share.cost / r.best_single.cost,
                           share.accuracy / r.best_single.accuracy, ratio(f.cost_to_match).c_str(), f.normalised_auc,
                           r.brier, r.base_rate_brier));
  }
  return lines;
}

/// Accuracy against cost (log scale): each learned family's curve as a
/// line with its chosen points as diamonds, single models as grey dots,
/// random, cheapest, best and oracle as marked points.
/// False when the file could not be written.
inline bool write_svg(const std::filesystem::path& path, const dataset_result& r) {
  using detail::format;
  const auto points = detail::all_points(r);
  double lo = points.front().cost, hi = lo, bottom = 1, top = 0;
  for (const auto& p : points) {
    if (p.cost > 0) lo = lo > 0 ? std::min(lo, p.cost) : p.cost;
    hi = std::max(hi, p.cost);
    bottom = std::min(bottom, p.accuracy);
    top = std::max(top, p.accuracy);
  }
  const double decade_lo = std::floor(std::log10(lo)), decade_hi = std::ceil(std::log10(hi));
  bottom = std::floor(bottom * 10) / 10;
  top = std::min(1.0, std::ceil(top * 10) / 10);
  constexpr double width = 760, height = 480, left = 70, right = 230, upper = 40, lower = 50;
  const auto x = [&](double cost) {
    return left + (std::log10(std::max(cost, lo)) - decade_lo) / (decade_hi - decade_lo) * (width - left - right);
  };
  const auto y = [&](double accuracy) {
    return height - lower - (accuracy - bottom) / (top - bottom) * (height - upper - lower);
  };

  std::ofstream out(path);
  out << format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="11">)",
                width, height)
      << '\n'
      << format(R"(<text x="%g" y="20" font-size="14">%s: accuracy against cost over %zu queries</text>)", left,
                detail::xml_escaped(r.name).c_str(), r.evaluated)
      << '\n';
  for (double d = decade_lo; d <= decade_hi; ++d)
    out << format(R"(<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#ddd"/><text x="%.1f" y="%g" text-anchor="middle">$%g</text>)",
                  x(std::pow(10, d)), upper, x(std::pow(10, d)), height - lower, x(std::pow(10, d)),
                  height - lower + 15, std::pow(10, d))
        << '\n';
  for (double a = bottom; a <= top + 1e-9; a += 0.1)
    out << format(R"(<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/><text x="%g" y="%.1f" text-anchor="end">%.1f</text>)",
                  left, y(a), width - right, y(a), left - 5, y(a) + 4, a)
        << '\n';
  out << format(R"(<text x="%g" y="%g" text-anchor="middle">total cost (USD, log scale)</text>)",
                (left + width - right) / 2, height - 12)
      << '\n';

  const char* family_colours[] = {"#1f77b4", "#e6550d", "#31a354"};
  for (std::size_t i = 0; i < r.families.size(); ++i) {
    const auto& f = r.families[i];
    const char* colour = family_colours[i % 3];
    std::vector<point> curve = f.curve;
    std::sort(curve.begin(), curve.end(), [](const point& a, const point& b) { return a.cost < b.cost; });
    out << format(R"(<polyline fill="none" stroke="%s" stroke-width="2" points=")", colour);
    for (const auto& p : curve) out << format("%.1f,%.1f ", x(p.cost), y(p.accuracy));
    out << "\"/>\n";
    for (const auto& p : f.chosen)
      out << format(R"(<path d="M%.1f %.1f l6 6 l-6 6 l-6 -6 z" fill="%s" stroke="#000"><title>%s</title></path>)",
                    x(p.cost), y(p.accuracy) - 6, colour, detail::xml_escaped(p.policy).c_str())
          << '\n';
    out << format(R"(<text x="%g" y="%g" fill="%s">%s</text>)", width - right + 10,
                  upper + 10 + 14.0 * static_cast<double>(i), colour, f.name.c_str())
        << '\n';
  }
  out << format(R"(<text x="%g" y="%g">diamonds: chosen on the</text><text x="%g" y="%g">learning queries</text>)",
                width - right + 10, upper + 10 + 14.0 * static_cast<double>(r.families.size()), width - right + 10,
                upper + 24 + 14.0 * static_cast<double>(r.families.size()))
      << '\n';
  for (const auto& p : r.singles)
    out << format(R"(<circle cx="%.1f" cy="%.1f" r="4" fill="#999"/><text x="%.1f" y="%.1f" fill="#666">%s</text>)",
                  x(p.cost), y(p.accuracy), x(p.cost) + 6, y(p.accuracy) + 4, detail::xml_escaped(p.policy).c_str())
        << '\n';
  const char* colours[] = {"#2ca02c", "#ff7f0e", "#9467bd", "#d62728"};
  const point marked[] = {r.random, r.cheapest, r.best, r.oracle};
  for (std::size_t i = 0; i < 4; ++i)
    out << format(R"(<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s"/><text x="%.1f" y="%.1f" fill="%s">%s</text>)",
                  x(marked[i].cost) - 4, y(marked[i].accuracy) - 4, colours[i], x(marked[i].cost) + 6,
                  y(marked[i].accuracy) - 6, colours[i], marked[i].policy.c_str())
        << '\n';
  out << "</svg>\n";
  out.close();
  return !out.fail();
}

}  // namespace route_eval
