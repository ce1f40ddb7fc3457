// keep_alive: how long a pooled connection may wait for its next request.
// A server closes a connection that stayed idle past its own keep-alive
// timeout (llama.cpp's server and uvicorn after 5 s, nginx after 75 s);
// reusing it after that costs a failed request. Some say their timeout in
// the response header "Keep-Alive: timeout=5, max=100"; for the others the
// client's own short default applies.
#pragma once

#include <algorithm>    // std::min
#include <chrono>       // std::chrono::milliseconds, seconds
#include <cstdint>      // std::uint64_t
#include <optional>     // std::optional
#include <string_view>  // std::string_view

#include "llmgate/http/header_parameters.hpp"  // for_each_header_parameter

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
  keep_alive_hint hint;
  for_each_header_parameter(value, [&](const header_parameter& parameter) {
    const std::optional<std::uint64_t> number = parameter.number();
    if (!number) return;
    if (parameter.is("timeout")) hint.timeout = std::chrono::seconds(std::min<std::uint64_t>(*number, 86'400));
    else if (parameter.is("max")) hint.max = *number;
  });
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
