// line_splitter: cuts a byte stream that arrives in arbitrary pieces into
// lines ended by "\n", "\r\n" or "\r" (SSE allows all three), keeping only
// the unfinished tail between pieces. A line longer than the limit is a
// protocol error, so a server cannot make us buffer without bound.
#pragma once

#include <cstddef>      // std::size_t
#include <cstring>      // std::memchr
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/error.hpp"

namespace llmgate::inline v0::detail {

class line_splitter {
 public:
  explicit line_splitter(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  /// Calls on_line(std::string_view) for every line completed by `bytes`,
  /// without its terminator. The view is valid during the call only.
  template <class OnLine>
  void feed(std::string_view bytes, OnLine&& on_line) {
    while (!bytes.empty()) {
      if (after_cr_) {  // a "\r\n" split between two pieces is one terminator
        after_cr_ = false;
        if (bytes.front() == '\n') {
          bytes.remove_prefix(1);
          continue;
        }
      }
      const std::size_t end = find_terminator(bytes);
      if (end == std::string_view::npos) {
        keep(bytes);
        return;
      }
      std::string_view line = bytes.substr(0, end);
      if (!tail_.empty()) {
        keep(line);
        line = tail_;
      } else if (line.size() > max_line_bytes_) {
        too_long();
      }
      on_line(line);
      tail_.clear();
      after_cr_ = bytes[end] == '\r';
      bytes.remove_prefix(end + 1);
    }
  }

  /// Whether an unfinished line is waiting for its terminator.
  bool has_partial_line() const noexcept { return !tail_.empty(); }

 private:
  // Two memchr calls (vectorised in libc) beat a byte loop over both characters.
  static std::size_t find_terminator(std::string_view bytes) noexcept {
    const void* lf = std::memchr(bytes.data(), '\n', bytes.size());
    const std::size_t until = lf ? static_cast<std::size_t>(static_cast<const char*>(lf) - bytes.data())
                                 : bytes.size();
    const void* cr = std::memchr(bytes.data(), '\r', until);
    if (cr) return static_cast<std::size_t>(static_cast<const char*>(cr) - bytes.data());
    return lf ? until : std::string_view::npos;
  }

  void keep(std::string_view bytes) {
    if (tail_.size() + bytes.size() > max_line_bytes_) too_long();
    tail_.append(bytes);
  }

  [[noreturn]] void too_long() const {
    throw error(errc::upstream_protocol_error,
                "stream line longer than " + std::to_string(max_line_bytes_) + " bytes");
  }

  std::size_t max_line_bytes_;
  std::string tail_;
  bool after_cr_ = false;
};

}  // namespace llmgate::inline v0::detail
