// keep_alive: how long a pooled connection may wait for its next request.
// A server closes a connection that stayed idle past its own keep-alive
// timeout (llama.cpp's server and uvicorn after 5 s, nginx after 75 s);
// reusing it after that costs a failed request. Some say their timeout in
// the response header "Keep-Alive: timeout=5, max=100"; for the others the
// client's own short default applies.
#pragma once

#include <algorithm>    // std::min
#include <cctype>       // std::tolower
#include <charconv>     // std::from_chars
#include <chrono>       // std::chrono::milliseconds, seconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <optional>     // std::optional
#include <string_view>  // std::string_view

namespace llmgate::inline v0::detail {

/// What a "Keep-Alive" response header says (RFC 2068 19.7.1.1).
struct keep_alive_hint {
  std::optional<std::chrono::seconds> timeout = {};  ///< the server closes a connection idle this long
  std::optional<std::uint64_t> max = {};             ///< requests the server still takes on this connection
};

/// Reads "timeout=N" and "max=N" from a Keep-Alive header value, in any
/// order and case, with or without spaces; other parameters and values
/// that are not whole numbers are ignored.
inline keep_alive_hint parse_keep_alive(std::string_view value) {
  const auto trim = [](std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
  };
  const auto named = [](std::string_view name, std::string_view expected) {
    if (name.size() != expected.size()) return false;
    for (std::size_t i = 0; i < name.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(name[i])) != expected[i]) return false;
    return true;
  };
  keep_alive_hint hint;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view item = value.substr(0, comma);
    value.remove_prefix(comma == std::string_view::npos ? value.size() : comma + 1);
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = trim(item.substr(0, equals));
    std::string_view number = trim(item.substr(equals + 1));
    if (number.size() >= 2 && number.front() == '"' && number.back() == '"') number = number.substr(1, number.size() - 2);
    std::uint64_t parsed = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), parsed);
    if (ec != std::errc() || end != number.data() + number.size() || number.empty()) continue;
    if (named(name, "timeout")) hint.timeout = std::chrono::seconds(std::min<std::uint64_t>(parsed, 86'400));
    else if (named(name, "max")) hint.max = parsed;
  }
  return hint;
}

/// How long a connection may stay in the pool after a response with
/// `hint`: a little less than the server's timeout (its clock started when
/// it wrote the response, ours when we read it, and a request takes time
/// to arrive), else `fallback`. Zero: do not pool it.
inline std::chrono::milliseconds pooled_lifetime(const keep_alive_hint& hint, std::chrono::milliseconds fallback) {
  using std::chrono::milliseconds;
  if (hint.max && *hint.max == 0) return milliseconds(0);
  if (!hint.timeout) return fallback;
  const milliseconds server = *hint.timeout;
  return server - std::min(milliseconds(1'000), server / 2);
}

}  // namespace llmgate::inline v0::detail
