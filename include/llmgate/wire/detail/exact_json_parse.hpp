// parse_exact: boost::json::parse, except that every number with a
// fraction or exponent is read correctly rounded (std::from_chars).
//
// Why: Boost.JSON's parser (1.81) rounds some decimals to a neighbouring
// double, so a value parsed, serialised and parsed again can move
// (2.5e-300 reads as 2.5000000000000003E-300, whose text reads as
// ...06E-300). The chat vocabulary keeps passed-through values as the text
// their first parse serialised to; reading that text exactly gives back
// the very double of the first parse, so cache scopes, exact-cache texts
// and adapters' bodies are what they were when the values were kept as
// JSON trees.
#pragma once

#include <charconv>      // std::from_chars
#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t, std::uint64_t
#include <optional>      // std::optional
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::errc

#include <boost/json/array.hpp>              // boost::json::array::max_size
#include <boost/json/basic_parser_impl.hpp>  // boost::json::basic_parser and its definition
#include <boost/json/error.hpp>              // boost::json::error
#include <boost/json/object.hpp>             // boost::json::object::max_size
#include <boost/json/storage_ptr.hpp>        // boost::json::storage_ptr
#include <boost/json/string.hpp>             // boost::json::string::max_size
#include <boost/json/value.hpp>              // boost::json::value
#include <boost/json/value_stack.hpp>        // boost::json::value_stack

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0::detail {

// Builds the value as boost::json::parser does (a value_stack), but reads
// doubles from their text.
struct exact_json_handler {
  static constexpr std::size_t max_object_size = boost::json::object::max_size();
  static constexpr std::size_t max_array_size = boost::json::array::max_size();
  static constexpr std::size_t max_key_size = boost::json::string::max_size();
  static constexpr std::size_t max_string_size = boost::json::string::max_size();

  using ec_type = boost::json::error_code;
  using text = boost::json::string_view;

  boost::json::value_stack stack;
  std::string number;  // a number's earlier parts, where it came in pieces

  exact_json_handler(boost::json::storage_ptr storage, unsigned char* buffer, std::size_t size)
      : stack(std::move(storage), buffer, size) {}

  bool on_document_begin(ec_type&) { return true; }
  bool on_document_end(ec_type&) { return true; }
  bool on_object_begin(ec_type&) { return true; }
  bool on_object_end(std::size_t n, ec_type&) { return stack.push_object(n), true; }
  bool on_array_begin(ec_type&) { return true; }
  bool on_array_end(std::size_t n, ec_type&) { return stack.push_array(n), true; }
  bool on_key_part(text s, std::size_t, ec_type&) { return stack.push_chars(s), true; }
  bool on_key(text s, std::size_t, ec_type&) { return stack.push_key(s), true; }
  bool on_string_part(text s, std::size_t, ec_type&) { return stack.push_chars(s), true; }
  bool on_string(text s, std::size_t, ec_type&) { return stack.push_string(s), true; }
  bool on_number_part(text s, ec_type&) { return number.append(s.data(), s.size()), true; }
  bool on_int64(std::int64_t i, text, ec_type&) { return number.clear(), stack.push_int64(i), true; }
  bool on_uint64(std::uint64_t u, text, ec_type&) { return number.clear(), stack.push_uint64(u), true; }
  bool on_double(double d, text s, ec_type&) {
    const char* first = s.data();
    const char* last = s.data() + s.size();
    if (!number.empty()) {
      number.append(s.data(), s.size());
      first = number.data();
      last = number.data() + number.size();
    }
    double exact = 0;
    const auto [end, code] = std::from_chars(first, last, exact);
    stack.push_double(code == std::errc() && end == last ? exact : d);  // out of range: as Boost.JSON reads it
    number.clear();
    return true;
  }
  bool on_bool(bool b, ec_type&) { return stack.push_bool(b), true; }
  bool on_null(ec_type&) { return stack.push_null(), true; }
  bool on_comment_part(text, ec_type&) { return true; }
  bool on_comment(text, ec_type&) { return true; }
};

/// How deep the JSON llmgate holds (a request's fields, kept as text) may
/// nest: it was checked on its way in against a request's own limit
/// (limits.max_json_depth, at most this), so reading it again never refuses it.
inline constexpr std::size_t held_json_max_depth = 1024;

/// The JSON value `text` holds, doubles read correctly rounded; null and
/// `ec` set where it is not one JSON value (or nests deeper than max_depth).
inline boost::json::value parse_exact(std::string_view text, boost::json::error_code& ec,
                                      boost::json::storage_ptr storage = {},
                                      std::size_t max_depth = held_json_max_depth) {
  unsigned char buffer[512];  // the parser's working stack, on this one while it fits (as boost::json::parse does)
  boost::json::parse_options options;
  options.max_depth = max_depth;
  boost::json::basic_parser<exact_json_handler> parser(options, storage, buffer, sizeof buffer);
  parser.handler().stack.reset(std::move(storage));
  const std::size_t read = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && read < text.size()) ec = boost::json::error::extra_data;
  if (ec) return boost::json::value(nullptr);
  return parser.handler().stack.release();
}

/// The value of `text` when it is one JSON number that Boost.JSON's parser
/// reads as an int64, a uint64 or a finite double (read exactly), as
/// parse_exact gives it but without a parser; nothing otherwise. Settings
/// such as temperature and max_tokens are read this way.
inline std::optional<boost::json::value> parse_number(std::string_view text) {
  const auto digit = [&](std::size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  std::size_t i = text.starts_with('-') ? 1 : 0;
  if (i < text.size() && text[i] == '0') ++i;
  else if (!digit(i)) return std::nullopt;
  else while (digit(i)) ++i;
  bool integer = true;
  if (i < text.size() && text[i] == '.') {
    if (!digit(++i)) return std::nullopt;
    while (digit(i)) ++i;
    integer = false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    if (++i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digit(i)) return std::nullopt;
    while (digit(i)) ++i;
    integer = false;
  }
  if (i != text.size()) return std::nullopt;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (integer) {  // Boost.JSON: int64 where it fits, else a positive one as uint64, else a double
    std::int64_t signed_value = 0;
    if (const auto [end, code] = std::from_chars(first, last, signed_value); code == std::errc() && end == last)
      return boost::json::value(signed_value);
    std::uint64_t unsigned_value = 0;
    if (const auto [end, code] = std::from_chars(first, last, unsigned_value); code == std::errc() && end == last)
      return boost::json::value(unsigned_value);
    return std::nullopt;
  }
  double d = 0;
  if (const auto [end, code] = std::from_chars(first, last, d); code == std::errc() && end == last)
    return boost::json::value(d);
  return std::nullopt;
}

}  // namespace llmgate::inline v0::detail
