// ndjson_parser: newline-delimited JSON read incrementally, as Ollama
// streams its answers: one JSON value per line, bytes split anywhere, blank
// lines skipped.
#pragma once

#include <cstddef>      // std::size_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/json/value.hpp>  // boost::json::value

#include "llmgate/backend/detail/line_splitter.hpp"
#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

class ndjson_parser {
 public:
  /// A line above max_line_bytes, or one that is not JSON, is a protocol
  /// error: llmgate::error(errc::upstream_protocol_error).
  explicit ndjson_parser(std::size_t max_line_bytes = std::size_t{8} << 20)
      : lines_(max_line_bytes) {}

  /// Appends to `values` every JSON value that `bytes` completes.
  void feed(std::string_view bytes, std::vector<boost::json::value>& values) {
    lines_.feed(bytes, [&](std::string_view line) {
      if (line.find_first_not_of(" \t") == std::string_view::npos) return;
      boost::system::error_code code;
      auto value = boost::json::parse(line, code);
      if (code)
        throw error(errc::upstream_protocol_error,
                    "NDJSON line is not JSON (" + code.message() + "): " +
                        std::string(line.substr(0, 80)));
      values.push_back(std::move(value));
    });
  }

  /// Whether an unfinished line is waiting: at the end of a stream, a sign
  /// that it was cut short.
  bool has_partial_line() const noexcept { return lines_.has_partial_line(); }

 private:
  detail::line_splitter lines_;
};

}  // namespace llmgate::inline v0
