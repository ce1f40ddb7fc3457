// svg_plot: the two plots the evaluation report draws, box plots and bar
// charts, as inline SVG that needs no script, font or file beside the page.
// Each is an <svg class="plot" data-plot="<name>"> with a title, a labelled
// y axis with ticks, labelled groups along x and, where a group holds
// several series, a legend. The numbers drawn are also in data-*
// attributes (a box's five numbers, a bar's value), so a reader or a test
// can check what a plot shows without measuring pixels.
//
// Groups run along x; inside a group, one box or bar per series. Series i
// has colour i in every plot; where each group has one series, group i
// takes colour i, so a per-model plot colours models as the grouped ones do.
#pragma once

#include <algorithm>    // std::sort, std::max, std::min, std::minmax_element
#include <cmath>        // std::floor, std::ceil, std::log10, std::pow, std::isfinite, std::abs
#include <cstddef>      // std::size_t
#include <iterator>     // std::size
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/eval/detail/report_text.hpp"  // escape_html, number_text, fixed_text, significant_text

namespace llmgate::inline v0::svg {

/// A box plot's five numbers: quantiles by linear interpolation between
/// order statistics (Hyndman and Fan's type 7, numpy's and R's default),
/// whiskers at the smallest and largest value.
struct box_summary {
  std::size_t n = 0;
  double low = 0, q1 = 0, median = 0, q3 = 0, high = 0;
};

/// The q-quantile (0 <= q <= 1) of sorted values, type 7; 0 when empty.
inline double quantile_of_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

/// The box of `values`; NaN and infinities are left out.
inline box_summary summarize_box(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  std::sort(values.begin(), values.end());
  if (values.empty()) return {};
  return {values.size(), values.front(), quantile_of_sorted(values, 0.25), quantile_of_sorted(values, 0.5),
          quantile_of_sorted(values, 0.75), values.back()};
}

/// What every plot has: its name (data-plot), title, axis labels, the
/// series' names (a legend is drawn for two or more), and a fixed y range
/// where the quantity has one (scores: 0 to 1); otherwise the range covers
/// the data and 0. Counts ask for `whole_numbers`: no tick between 0 and 1.
struct chart {
  std::string name;
  std::string title;
  std::string y_label;
  std::string x_label = {};
  std::vector<std::string> legend = {};
  std::optional<double> y_min = {}, y_max = {};
  bool whole_numbers = false;
};

/// One group of boxes: series[i] are the values of legend[i]; an empty one draws nothing.
struct box_group {
  std::string label;
  std::vector<std::vector<double>> series;
};

/// One group of bars: series[i] is the value of legend[i]; nullopt draws "n/a".
struct bar_group {
  std::string label;
  std::vector<std::optional<double>> series;
};

namespace plot_detail {

using report_detail::escape_html;
using report_detail::fixed_text;
using report_detail::number_text;
using report_detail::significant_text;

// Okabe and Ito's colours, told apart by people with any colour vision.
inline constexpr std::string_view palette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                               "#56B4E9", "#D55E00", "#F0E442", "#000000"};

inline std::string_view colour(std::size_t i) { return palette[i % std::size(palette)]; }

inline std::string px(double value) { return fixed_text(value, 1); }

/// A y axis from lo to hi with ticks at 1, 2 or 5 times a power of ten.
struct axis {
  double lo = 0, hi = 1, step = 0.2;
  int decimals = 1;

  static axis fit(double lo, double hi, bool fixed, bool whole_numbers) {
    if (!(hi > lo)) hi = lo + 1;
    const double rough = (hi - lo) / 5;
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    const double ratio = rough / power;
    double step = (ratio <= 1 ? 1 : ratio <= 2 ? 2 : ratio <= 5 ? 5 : 10) * power;
    if (whole_numbers) step = std::max(step, 1.0);
    axis a;
    a.step = step;
    a.lo = fixed ? lo : std::floor(lo / step) * step;
    a.hi = fixed ? hi : std::ceil(hi / step) * step;
    a.decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    return a;
  }
};

/// The plot's frame: title, legend, axes; maps values to pixels.
class frame {
 public:
  static constexpr double left = 72, right = 16, top = 40, bottom = 64, height = 320;

  frame(const chart& c, std::size_t groups, std::size_t per_group, axis y)
      : chart_(c), groups_(std::max<std::size_t>(groups, 1)), per_group_(std::max<std::size_t>(per_group, 1)), y_(y) {
    slot_ = std::max(24.0, std::min(56.0, 640.0 / static_cast<double>(groups_ * per_group_)));
    group_width_ = slot_ * static_cast<double>(per_group_) + 16;
    legend_rows_ = c.legend.size() > 1 ? 1 : 0;
    width_ = std::max(480.0, left + right + group_width_ * static_cast<double>(groups_));
  }

  double width() const { return width_; }
  double plot_top() const { return top + 20.0 * legend_rows_; }
  double plot_bottom() const { return height - bottom; }
  double slot() const { return slot_; }
  double y(double value) const {
    const double clamped = std::min(std::max(value, y_.lo), y_.hi);
    return plot_bottom() - (clamped - y_.lo) / (y_.hi - y_.lo) * (plot_bottom() - plot_top());
  }
  /// The centre of series s's slot in group g.
  double x(std::size_t g, std::size_t s) const {
    return left + group_width_ * static_cast<double>(g) + 8 + slot_ * (static_cast<double>(s) + 0.5);
  }
  double group_centre(std::size_t g) const { return left + group_width_ * (static_cast<double>(g) + 0.5); }

  std::string open() const {
    std::string out = "<svg class=\"plot\" data-plot=\"" + escape_html(chart_.name) + "\" width=\"" + px(width_) +
                      "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(width_) + " " + px(height) +
                      "\" role=\"img\" aria-label=\"" + escape_html(chart_.title) + "\">\n";
    out += "<title>" + escape_html(chart_.title) + "</title>\n";
    // Title and x label at the left, where a plot wider than the page is seen without scrolling.
    out += "<text class=\"title\" x=\"" + px(left) + "\" y=\"20\">" +
           escape_html(chart_.title) + "</text>\n";
    if (legend_rows_) {
      double x = left;
      for (std::size_t i = 0; i < chart_.legend.size(); ++i) {
        out += "<g class=\"legend-entry\"><rect x=\"" + px(x) + "\" y=\"" + px(top - 6) +
               "\" width=\"10\" height=\"10\" fill=\"" + std::string(colour(i)) + "\"/><text x=\"" + px(x + 14) +
               "\" y=\"" + px(top + 3) + "\">" + escape_html(chart_.legend[i]) + "</text></g>\n";
        x += 24 + 7.0 * static_cast<double>(chart_.legend[i].size());
      }
    }
    return out;
  }

  /// Axes, ticks and labels, drawn under the data.
  std::string axes(std::span<const std::string> group_labels) const {
    std::string out = "<g class=\"axes\">\n";
    out += "<line x1=\"" + px(left) + "\" y1=\"" + px(plot_top()) + "\" x2=\"" + px(left) + "\" y2=\"" +
           px(plot_bottom()) + "\" stroke=\"#333\"/>\n";
    const double zero = y(std::min(std::max(0.0, y_.lo), y_.hi));
    out += "<line x1=\"" + px(left) + "\" y1=\"" + px(zero) + "\" x2=\"" + px(width_ - right) + "\" y2=\"" + px(zero) +
           "\" stroke=\"#333\"/>\n";
    const auto ticks = static_cast<long long>(std::floor((y_.hi - y_.lo) / y_.step + 1e-9));
    for (long long i = 0; i <= ticks && i <= 100; ++i) {
      const double value = y_.lo + static_cast<double>(i) * y_.step;
      const double at = y(value);
      out += "<line x1=\"" + px(left - 4) + "\" y1=\"" + px(at) + "\" x2=\"" + px(width_ - right) + "\" y2=\"" + px(at) +
             "\" stroke=\"#ddd\"/><text class=\"tick\" x=\"" + px(left - 6) + "\" y=\"" + px(at + 4) +
             "\" text-anchor=\"end\">" + fixed_text(value, y_.decimals) + "</text>\n";
    }
    const double middle = (plot_top() + plot_bottom()) / 2;
    out += "<text class=\"axis-label\" x=\"16\" y=\"" + px(middle) +
           "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " + px(middle) + ")\">" + escape_html(chart_.y_label) +
           "</text>\n";
    // Long labels turn so that neighbours do not overlap.
    std::size_t longest = 0;
    for (const auto& label : group_labels) longest = std::max(longest, label.size());
    const bool turn = 6.5 * static_cast<double>(longest) > group_width_;
    for (std::size_t g = 0; g < group_labels.size(); ++g) {
      const double cx = group_centre(g), cy = plot_bottom() + 16;
      out += "<text class=\"group-label\" x=\"" + px(cx) + "\" y=\"" + px(cy) + "\" text-anchor=\"" +
             (turn ? "end\" transform=\"rotate(-25 " + px(cx) + " " + px(cy) + ")\"" : std::string("middle\"")) + ">" +
             escape_html(group_labels[g]) + "</text>\n";
    }
    if (!chart_.x_label.empty())
      out += "<text class=\"axis-label\" x=\"" + px(left) + "\" y=\"" + px(height - 6) + "\">" +
             escape_html(chart_.x_label) + "</text>\n";
    return out + "</g>\n";
  }

  std::string no_data() const {
    return "<text class=\"no-data\" x=\"" + px(width_ / 2) + "\" y=\"" + px((plot_top() + plot_bottom()) / 2) +
           "\" text-anchor=\"middle\">no data</text>\n";
  }

 private:
  const chart& chart_;
  std::size_t groups_, per_group_;
  axis y_;
  double slot_ = 24, group_width_ = 40, width_ = 480;
  int legend_rows_ = 0;
};

inline std::size_t widest(auto groups) {
  std::size_t most = 1;
  for (const auto& g : groups) most = std::max(most, g.series.size());
  return most;
}

// The chart's frame, axes and group labels, with a note where there is no data.
inline std::string opened(const frame& f, auto groups, bool has_data) {
  std::vector<std::string> labels;
  for (const auto& g : groups) labels.push_back(g.label);
  std::string out = f.open() + f.axes(labels);
  if (!has_data) out += f.no_data();
  return out;
}

inline std::string series_name(const chart& c, const std::string& group, std::size_t s) {
  return s < c.legend.size() ? c.legend[s] : group;
}

inline std::string_view series_colour(std::size_t groups_series, std::size_t g, std::size_t s) {
  return groups_series > 1 ? colour(s) : colour(g);
}

}  // namespace plot_detail

/// Box plots of each group's series.
inline std::string box_plot(const chart& c, std::span<const box_group> groups) {
  using namespace plot_detail;
  std::vector<std::vector<box_summary>> boxes(groups.size());
  std::optional<double> lo, hi;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const auto& values : groups[g].series) {
      boxes[g].push_back(summarize_box(values));
      if (boxes[g].back().n == 0) continue;
      lo = std::min(lo.value_or(boxes[g].back().low), boxes[g].back().low);
      hi = std::max(hi.value_or(boxes[g].back().high), boxes[g].back().high);
    }
  }
  const bool fixed = c.y_min && c.y_max;
  const axis y = axis::fit(c.y_min.value_or(std::min(0.0, lo.value_or(0))), c.y_max.value_or(hi.value_or(1)), fixed,
                           c.whole_numbers);
  const std::size_t per_group = widest(groups);
  frame f(c, groups.size(), per_group, y);
  std::string out = opened(f, groups, lo.has_value());
  const double half = f.slot() * 0.35;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t s = 0; s < boxes[g].size(); ++s) {
      const box_summary& b = boxes[g][s];
      if (b.n == 0) continue;
      const double x = f.x(g, s);
      const std::string name = series_name(c, groups[g].label, s);
      out += "<g class=\"box\" data-group=\"" + escape_html(groups[g].label) + "\" data-series=\"" + escape_html(name) +
             "\" data-n=\"" + std::to_string(b.n) + "\" data-min=\"" + number_text(b.low) + "\" data-q1=\"" +
             number_text(b.q1) + "\" data-median=\"" + number_text(b.median) + "\" data-q3=\"" + number_text(b.q3) +
             "\" data-max=\"" + number_text(b.high) + "\">";
      out += "<title>" + escape_html(name) +
             (groups[g].label.empty() || groups[g].label == name ? "" : ", " + escape_html(groups[g].label)) + ": n " +
             std::to_string(b.n) + ", median " + number_text(b.median) + ", quartiles " + number_text(b.q1) + " to " +
             number_text(b.q3) + ", range " + number_text(b.low) + " to " + number_text(b.high) + "</title>";
      out += "<line x1=\"" + px(x) + "\" y1=\"" + px(f.y(b.low)) + "\" x2=\"" + px(x) + "\" y2=\"" + px(f.y(b.high)) +
             "\" stroke=\"#333\"/>";
      // A box too thin to show its colour (one value, or all alike) is drawn 4 px high.
      const double box_height = std::max(4.0, f.y(b.q1) - f.y(b.q3));
      const double box_top = (f.y(b.q1) + f.y(b.q3) - box_height) / 2;
      out += "<rect x=\"" + px(x - half) + "\" y=\"" + px(box_top) + "\" width=\"" + px(2 * half) + "\" height=\"" +
             px(box_height) + "\" fill=\"" +
             std::string(series_colour(per_group, g, s)) + "\" fill-opacity=\"0.75\" stroke=\"#333\"/>";
      out += "<line x1=\"" + px(x - half) + "\" y1=\"" + px(f.y(b.median)) + "\" x2=\"" + px(x + half) + "\" y2=\"" +
             px(f.y(b.median)) + "\" stroke=\"#000\" stroke-width=\"2\"/>";
      out += "</g>\n";
    }
  }
  return out + "</svg>\n";
}

/// Bars of each group's series, from 0 (or the axis' end nearest it).
inline std::string bar_chart(const chart& c, std::span<const bar_group> groups) {
  using namespace plot_detail;
  std::optional<double> lo, hi;
  for (const auto& g : groups)
    for (const auto& value : g.series)
      if (value && std::isfinite(*value))
        lo = std::min(lo.value_or(*value), *value), hi = std::max(hi.value_or(*value), *value);
  const bool fixed = c.y_min && c.y_max;
  const axis y = axis::fit(c.y_min.value_or(std::min(0.0, lo.value_or(0))),
                           c.y_max.value_or(std::max(0.0, hi.value_or(1))), fixed, c.whole_numbers);
  const std::size_t per_group = widest(groups);
  frame f(c, groups.size(), per_group, y);
  std::string out = opened(f, groups, lo.has_value());
  const double half = f.slot() * 0.4;
  const double base = f.y(std::min(std::max(0.0, y.lo), y.hi));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t s = 0; s < groups[g].series.size(); ++s) {
      const auto& value = groups[g].series[s];
      const double x = f.x(g, s);
      const std::string name = series_name(c, groups[g].label, s);
      if (!value || !std::isfinite(*value)) {
        out += "<text class=\"bar-missing\" data-group=\"" + escape_html(groups[g].label) + "\" data-series=\"" +
               escape_html(name) + "\" x=\"" + px(x) + "\" y=\"" + px(base - 4) +
               "\" text-anchor=\"middle\">n/a</text>\n";
        continue;
      }
      const double top = f.y(*value);
      out += "<g class=\"bar\" data-group=\"" + escape_html(groups[g].label) + "\" data-series=\"" + escape_html(name) +
             "\" data-value=\"" + number_text(*value) + "\"><title>" + escape_html(name) +
             (groups[g].label.empty() || groups[g].label == name ? "" : ", " + escape_html(groups[g].label)) + ": " +
             number_text(*value) + "</title><rect x=\"" + px(x - half) + "\" y=\"" + px(std::min(top, base)) +
             "\" width=\"" + px(2 * half) + "\" height=\"" + px(std::max(0.5, std::abs(base - top))) + "\" fill=\"" +
             std::string(series_colour(per_group, g, s)) + "\"/><text class=\"bar-value\" x=\"" + px(x) + "\" y=\"" +
             px(std::min(top, base) - 3) + "\" text-anchor=\"middle\">" +
             (std::abs(*value) >= 1000 ? fixed_text(*value, 0) : significant_text(*value, 3)) + "</text></g>\n";
    }
  }
  return out + "</svg>\n";
}

}  // namespace llmgate::inline v0::svg
