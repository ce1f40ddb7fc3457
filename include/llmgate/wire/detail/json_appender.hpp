// json_appender: writes JSON pieces onto the end of a string, strings
// escaped as boost::json::serialize writes them, with no tree and no string
// per value. The OpenAI wire writers (wire/openai_wire.hpp) write every body
// this way, the exact cache a request's canonical text, and the gateway its
// JSON responses and log lines. Network side: value() writes Boost.JSON's
// values.
//
// Doubles are written as plain decimals (1795692372.1728883, 0.00000035,
// 0.0), not as Boost.JSON writes them (1.7956923721728883E9, 3.5E-7, 0E0):
// the shortest digits that read back to the same double, with ".0" on a
// whole number so that a reader still sees a double. Only magnitudes a
// decimal would spell out at length (below 1e-12, from 1e21) keep an
// exponent (5e-324); non-finite values, which JSON lacks, are null.
#pragma once

#include <charconv>     // std::to_chars, std::chars_format
#include <cmath>        // std::isfinite, std::fabs
#include <cstdint>      // std::int64_t, std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::exchange

#include <boost/json/array.hpp>       // boost::json::array
#include <boost/json/object.hpp>      // boost::json::object
#include <boost/json/value.hpp>       // boost::json::value

#include "llmgate/embed/unicode.hpp"  // unicode::decode_utf8
#include "llmgate/version.hpp"        // the inline versioned namespace

namespace llmgate::inline v0::detail {

class json_appender {
 public:
  explicit json_appender(std::string& out) noexcept : out_(out) {}

  /// Text as it is: punctuation and names known to need no escaping.
  void raw(std::string_view text) { out_.append(text); }

  /// `text` as a JSON string, escaped as boost::json::serialize escapes:
  /// '"' and '\\', the short forms \b \t \n \f \r, other control
  /// characters as \u00xx (lower-case hex), UTF-8 as it is. Bytes that are
  /// not UTF-8 (a request's path, say) become U+FFFD, so that what is
  /// written is always JSON.
  void string(std::string_view text) {
    out_.push_back('"');
    const char* run = text.data();
    const char* const end = text.data() + text.size();
    for (const char* at = run; at != end; ++at) {
      const auto byte = static_cast<unsigned char>(*at);
      if (byte >= 0x80) {
        const auto [code_point, length] = unicode::decode_utf8(text, static_cast<std::size_t>(at - text.data()));
        if (code_point == unicode::replacement_character && !std::string_view(at, end).starts_with(replacement)) {
          out_.append(run, at);
          out_.append(replacement);
          run = at + length;
        }
        at += length - 1;
        continue;
      }
      if (byte >= 0x20 && byte != '"' && byte != '\\') continue;
      out_.append(run, at);
      run = at + 1;
      char escaped[6] = {'\\', 0, '0', '0', 0, 0};
      switch (byte) {
        case '"': escaped[1] = '"'; break;
        case '\\': escaped[1] = '\\'; break;
        case '\b': escaped[1] = 'b'; break;
        case '\t': escaped[1] = 't'; break;
        case '\n': escaped[1] = 'n'; break;
        case '\f': escaped[1] = 'f'; break;
        case '\r': escaped[1] = 'r'; break;
        default:
          escaped[1] = 'u';
          escaped[4] = "0123456789abcdef"[byte >> 4];
          escaped[5] = "0123456789abcdef"[byte & 15];
          out_.append(escaped, 6);
          continue;
      }
      out_.append(escaped, 2);
    }
    out_.append(run, end);
    out_.push_back('"');
  }

  void number(std::uint64_t n) { integer(n); }
  void number(std::int64_t n) { integer(n); }
  void number(double d) { append_decimal(out_, d); }

  /// Any JSON value, as boost::json::serialize writes it but for doubles,
  /// which are plain decimals (number(double)).
  void value(const boost::json::value& value) {
    switch (value.kind()) {
      case boost::json::kind::null: out_.append("null"); return;
      case boost::json::kind::bool_: out_.append(value.get_bool() ? "true" : "false"); return;
      case boost::json::kind::int64: integer(value.get_int64()); return;
      case boost::json::kind::uint64: integer(value.get_uint64()); return;
      case boost::json::kind::double_: number(value.get_double()); return;
      case boost::json::kind::string: string(value.get_string()); return;
      case boost::json::kind::array: this->value(value.get_array()); return;
      case boost::json::kind::object: this->value(value.get_object()); return;
    }
  }
  void value(const boost::json::array& array) {
    out_.push_back('[');
    bool first = true;
    for (const auto& element : array) {
      if (!std::exchange(first, false)) out_.push_back(',');
      value(element);
    }
    out_.push_back(']');
  }
  void value(const boost::json::object& object) {
    out_.push_back('{');
    bool first = true;
    for (const auto& field : object) {
      if (!std::exchange(first, false)) out_.push_back(',');
      string(field.key());
      out_.push_back(':');
      value(field.value());
    }
    out_.push_back('}');
  }

  /// `d` as JSON text onto `out`: a plain decimal (see the top of this file).
  static void append_decimal(std::string& out, double d) {
    if (!std::isfinite(d)) {
      out.append("null");
      return;
    }
    char text[64];
    const double magnitude = std::fabs(d);
    const bool plain = magnitude == 0 || (magnitude >= 1e-12 && magnitude < 1e21);
    const auto end = std::to_chars(text, text + sizeof text, d, plain ? std::chars_format::fixed
                                                                       : std::chars_format::scientific).ptr;
    const std::string_view written(text, static_cast<std::size_t>(end - text));
    out.append(written);
    if (plain && written.find('.') == std::string_view::npos) out.append(".0");
  }

 private:
  static constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

  template <class Integer>
  void integer(Integer n) {
    char digits[24];
    out_.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
  }

  std::string& out_;
};

}  // namespace llmgate::inline v0::detail
