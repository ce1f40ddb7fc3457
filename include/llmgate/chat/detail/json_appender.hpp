// json_appender: writes JSON pieces onto the end of a string, strings
// escaped and numbers formatted as boost::json::serialize writes them, with
// no tree and no string per value. The OpenAI wire writers
// (chat/openai_wire.hpp) write every body this way, and the exact cache a
// request's canonical text. Network side: it uses Boost.JSON's serializer.
#pragma once

#include <charconv>     // std::to_chars
#include <cstdint>      // std::int64_t, std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/serializer.hpp>  // boost::json::serializer
#include <boost/json/value.hpp>       // boost::json::value

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0::detail {

class json_appender {
 public:
  explicit json_appender(std::string& out) noexcept : out_(out) {}

  /// Text as it is: punctuation and names known to need no escaping.
  void raw(std::string_view text) { out_.append(text); }

  /// `text` as a JSON string.
  void string(std::string_view text) {
    serializer_.reset(boost::json::string_view(text.data(), text.size()));
    drain();
  }

  void number(std::uint64_t n) { integer(n); }
  void number(std::int64_t n) { integer(n); }
  void number(double d) { value(boost::json::value(d)); }

  /// Any JSON value, as boost::json::serialize writes it.
  void value(const boost::json::value& value) {
    serializer_.reset(&value);
    drain();
  }

 private:
  template <class Integer>
  void integer(Integer n) {
    char digits[24];
    out_.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
  }

  void drain() {
    while (!serializer_.done()) {
      const auto piece = serializer_.read(buffer_, sizeof buffer_);
      out_.append(piece.data(), piece.size());
    }
  }

  std::string& out_;
  boost::json::serializer serializer_;
  char buffer_[256];
};

}  // namespace llmgate::inline v0::detail
