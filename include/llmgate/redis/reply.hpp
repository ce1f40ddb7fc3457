// reply: one Redis reply, owned, as llmgate reads it (RESP2: strings,
// status lines, errors, integers, nil, arrays). The RESP bytes themselves
// are parsed by hiredis's reader (resp_reader.hpp); this is what the rest
// of the Redis tier interprets, so that no hiredis type leaks past it.
#pragma once

#include <cstdint>   // std::uint16_t
#include <string>    // std::string
#include <vector>    // std::vector

namespace llmgate::inline v0::redis {

enum class reply_kind : std::uint8_t { string, status, error, integer, nil, array };

struct reply {
  reply_kind kind = reply_kind::nil;
  std::string text = {};          ///< a string's bytes, a status line, an error's message ("MOVED 3999 host:port")
  long long integer = 0;          ///< an integer reply
  std::vector<reply> elements = {};  ///< an array's elements

  bool is_error() const noexcept { return kind == reply_kind::error; }
  bool is_nil() const noexcept { return kind == reply_kind::nil; }
  bool is_string() const noexcept { return kind == reply_kind::string; }
  bool is_array() const noexcept { return kind == reply_kind::array; }

  friend bool operator==(const reply&, const reply&) = default;
};

/// One command and its arguments, each sent as a bulk string
/// ({"SET", key, value, "PX", "60000"}): binary-safe.
using command = std::vector<std::string>;

/// Where a Redis server listens.
struct endpoint {
  std::string host = {};
  std::uint16_t port = 6379;
  friend bool operator==(const endpoint&, const endpoint&) = default;
};

}  // namespace llmgate::inline v0::redis
