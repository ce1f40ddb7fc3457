// A request's cache directives as HTTP writes them: the Cache-Control
// header's request directives (RFC 9111, section 5.2.1) that a cache of
// answers can keep, read into cache_directives and written back for the
// response to echo, and the cache namespace a client names.
//
//   no-cache    do not answer from a cache; store the fresh answer
//   no-store    neither answer from a cache nor store the answer
//   max-age=N   answer only from what was stored less than N seconds ago
//
// Directive names are case-insensitive; a directive not listed here is
// ignored, as HTTP caches ignore one they do not know. A max-age whose
// value is not a number of seconds is refused: the client meant something
// the gateway would otherwise silently not do.
#pragma once

#include <algorithm>    // std::all_of, std::min
#include <chrono>       // std::chrono::seconds
#include <cstdint>      // std::uint64_t
#include <optional>     // std::optional
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view

#include "llmgate/http/header_parameters.hpp"    // for_each_header_parameter
#include "llmgate/pipeline/request_context.hpp"  // cache_directives

namespace llmgate::inline v0 {

/// The directives of a Cache-Control value ("no-cache, max-age=60").
/// Throws std::invalid_argument for a max-age that is not a number of seconds.
inline cache_directives parse_cache_control(std::string_view text) {
  cache_directives directives;
  for_each_header_parameter(text, [&](const header_parameter& directive) {
    if (directive.is("no-cache")) {
      directives.lookup = false;
    } else if (directive.is("no-store")) {
      directives.lookup = false;
      directives.store = false;
    } else if (directive.is("max-age")) {
      const std::optional<std::uint64_t> seconds = directive.number();
      if (!seconds)
        throw std::invalid_argument("Cache-Control max-age must be a whole number of seconds, not \"" +
                                    std::string(directive.value) + "\".");
      directives.max_age = std::chrono::seconds(std::min<std::uint64_t>(*seconds, std::uint64_t{1} << 40));
    }
  });
  return directives;
}

/// The directives as a Cache-Control value ("no-store", "no-cache,
/// max-age=60"); empty for the default, which allows everything.
inline std::string cache_control_text(const cache_directives& directives) {
  std::string text = !directives.store ? "no-store" : !directives.lookup ? "no-cache" : "";
  if (directives.max_age) {
    if (!text.empty()) text += ", ";
    text += "max-age=" + std::to_string(directives.max_age->count());
  }
  return text;
}

/// Throws std::invalid_argument unless `name` can name a cache namespace:
/// 1 to 128 visible ASCII characters (it is echoed in a response header).
inline void check_cache_namespace(std::string_view name) {
  const bool visible = std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c <= '~'; });
  if (name.empty() || name.size() > 128 || !visible)
    throw std::invalid_argument("A cache namespace is 1 to 128 visible ASCII characters.");
}

}  // namespace llmgate::inline v0
