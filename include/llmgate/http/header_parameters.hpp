// The comma-separated items of an HTTP header value such as Cache-Control
// ("no-cache, max-age=60") or Keep-Alive ("timeout=5, max=100"), each a
// name or a name=value: whitespace around each part trimmed, a quoted value
// unquoted, names compared without regard to case (RFC 9110, section 5.6).
#pragma once

#include <algorithm>    // std::equal
#include <cctype>       // std::tolower
#include <charconv>     // std::from_chars
#include <cstdint>      // std::uint64_t
#include <optional>     // std::optional
#include <string_view>  // std::string_view

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0 {

struct header_parameter {
  std::string_view name = {};
  std::string_view value = {};  ///< unquoted; empty when the item has no '='

  /// Whether the name is `lowercase`, in any case.
  bool is(std::string_view lowercase) const noexcept {
    return name.size() == lowercase.size() && std::equal(name.begin(), name.end(), lowercase.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           });
  }

  /// The value as a whole decimal number; none for anything else.
  std::optional<std::uint64_t> number() const noexcept {
    std::uint64_t parsed = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
    return parsed;
  }
};

/// Calls visit(header_parameter) for each item of `value`, in order.
template <class Visit>
void for_each_header_parameter(std::string_view value, Visit visit) {
  const auto trimmed = [](std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
  };
  while (!value.empty()) {
    const auto comma = value.find(',');
    const std::string_view item = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    const auto equals = item.find('=');
    header_parameter parameter{.name = trimmed(item.substr(0, equals))};
    if (equals != std::string_view::npos) {
      parameter.value = trimmed(item.substr(equals + 1));
      if (parameter.value.size() >= 2 && parameter.value.front() == '"' && parameter.value.back() == '"')
        parameter.value = parameter.value.substr(1, parameter.value.size() - 2);
    }
    if (!parameter.name.empty()) visit(parameter);
  }
}

}  // namespace llmgate::inline v0
