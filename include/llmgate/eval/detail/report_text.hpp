// report_text: the few text forms the evaluation kit's report, result
// files and rating page share: numbers written so that they read back to
// the same double, text escaped for HTML, CSV fields and rows (RFC 4180),
// and instants as UTC dates.
#pragma once

#include <algorithm>    // std::min
#include <charconv>     // std::to_chars
#include <chrono>       // std::chrono::sys_days, year_month_day, floor
#include <cmath>        // std::isfinite
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t
#include <cstdio>       // std::snprintf
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view

namespace llmgate::inline v0::report_detail {

/// The shortest text that reads back to `value` ("0.5", "412.8375", "1e-07");
/// "null" for NaN and infinities, which neither JSON nor CSV readers agree on.
inline std::string number_text(double value) {
  if (!std::isfinite(value)) return "null";
  if (value == 0) return "0";  // never "-0"
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return {text, end};
}

/// `value` with `decimals` digits after the point, for people to read.
inline std::string fixed_text(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  char text[512];  // the largest double has 309 digits before the point
  const int length = std::snprintf(text, sizeof text, "%.*f", decimals < 0 ? 0 : decimals > 17 ? 17 : decimals, value);
  std::string out(text, length > 0 ? std::min(static_cast<std::size_t>(length), sizeof text - 1) : 0);
  // "-0.00" reads as a negative figure where there is none.
  if (out.starts_with('-') && out.find_first_not_of("0.", 1) == std::string::npos) out.erase(0, 1);
  return out;
}

/// `value` with `digits` significant digits ("0.000412", "12.3", "1.23e+04").
inline std::string significant_text(double value, int digits) {
  if (!std::isfinite(value)) return "-";
  char text[48];
  const int length = std::snprintf(text, sizeof text, "%.*g", digits < 1 ? 1 : digits > 17 ? 17 : digits, value);
  return {text, length > 0 ? std::min(static_cast<std::size_t>(length), sizeof text - 1) : 0};
}

/// Text safe in HTML element content and in quoted attribute values.
inline std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

/// "2026-11-26 23:40:05 UTC".
inline std::string utc_text(std::int64_t unix_ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> at{milliseconds(unix_ms)};
  const auto day = floor<days>(at);
  const year_month_day date{day};
  const hh_mm_ss time{floor<seconds>(at - day)};
  char text[48];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u %02lld:%02lld:%02lld UTC", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<long long>(time.hours().count()), static_cast<long long>(time.minutes().count()),
                static_cast<long long>(time.seconds().count()));
  return text;
}

/// The UTC hour of the day (0-23) of an instant.
inline int utc_hour(std::int64_t unix_ms) {
  constexpr std::int64_t hour_ms = 3'600'000;
  const std::int64_t hours = unix_ms >= 0 ? unix_ms / hour_ms : -((-unix_ms + hour_ms - 1) / hour_ms);
  return static_cast<int>(((hours % 24) + 24) % 24);
}

/// One field as RFC 4180 writes it.
inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out += '"';
}

/// One row, CRLF-terminated.
inline std::string csv_row(std::span<const std::string> fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += csv_field(fields[i]);
  }
  return out += "\r\n";
}

}  // namespace llmgate::inline v0::report_detail
