// The reading kit of llmgate's JSON configuration files (the gateway's,
// an evaluation's): each field read by type, each value checked against
// its range, unknown keys refused with the nearest known one, and every
// refusal a config_error naming the field by its JSON path:
//
//   config: semantic_cache.treshold is not a known key; did you mean threshold?
#pragma once

#include <algorithm>         // std::find, std::none_of
#include <cctype>            // std::isspace
#include <charconv>          // std::to_chars, std::from_chars
#include <cmath>             // std::floor, std::abs
#include <cstddef>           // std::size_t
#include <cstdint>           // std::uint16_t, std::uint64_t
#include <cstdlib>           // std::getenv
#include <initializer_list>  // std::initializer_list (known keys)
#include <optional>          // std::optional
#include <span>              // std::span
#include <string>            // std::string
#include <string_view>       // std::string_view
#include <system_error>      // std::errc
#include <type_traits>       // std::is_integral_v
#include <utility>           // std::pair
#include <vector>            // std::vector

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object
#include <boost/json/value.hpp>   // boost::json::value

#include "llmgate/config/config_error.hpp"     // config_error
#include "llmgate/config/key_suggestions.hpp"  // nearest_name
#include "llmgate/version.hpp"                 // the inline versioned namespace

namespace llmgate::inline v0::detail {

// "where.key", or "key" at the top level.
inline std::string config_path(std::string_view where, std::string_view key) {
  return where.empty() ? std::string(key) : std::string(where) + "." + std::string(key);
}

// Every config mistake goes through here: "config: <path> <what>".
[[noreturn]] inline void refuse(std::string_view path, std::string_view what) {
  throw config_error("config: " + std::string(path) + " " + std::string(what));
}

// A number as a message shows it: integers in full, others as short as
// they read back (0.9, not 0.90000000000000002).
template <class Number>
std::string number_text(Number value) {
  if constexpr (std::is_integral_v<Number>) {
    return std::to_string(value);
  } else {
    const double x = static_cast<double>(value);
    if (x == std::floor(x) && std::abs(x) < 1e15) return std::to_string(static_cast<long long>(x));
    char text[64];
    const auto end = std::to_chars(text, text + sizeof text, x, std::chars_format::fixed).ptr;
    return std::string(text, end);
  }
}

// Refuses `value` outside [low, high] at `path`.
template <class Number>
void within(std::string_view path, Number value, Number low, Number high) {
  if (!(value >= low && value <= high))
    refuse(path, "must be between " + number_text(low) + " and " + number_text(high) + ", not " + number_text(value));
}

// Refuses a fraction outside (0, 1], or (0, 1) when 1 is not allowed.
inline void fraction(std::string_view path, double value, bool one_allowed) {
  if (!(value > 0 && (value < 1 || (one_allowed && value == 1))))
    refuse(path, std::string("must be greater than 0 and ") + (one_allowed ? "at most 1" : "less than 1") + ", not " +
                     number_text(value));
}

// Refuses the first key of `section` that is not `known`: with the nearest
// known key when one is near, else with the list. `whose` qualifies the
// section in the message (" of a demo backend").
inline void only_known_keys(const boost::json::object& section, std::string_view where,
                            std::span<const std::string_view> known, std::string_view whose = "") {
  for (const auto& field : section) {
    const std::string_view key = field.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string what = "is not a known key" + std::string(whose);
    if (const auto near = nearest_name(key, known)) refuse(config_path(where, key), what + "; did you mean " + std::string(*near) + "?");
    std::string list;
    for (const auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    refuse(config_path(where, key), what + " (known: " + list + ")");
  }
}
inline void only_known_keys(const boost::json::object& section, std::string_view where,
                            std::initializer_list<std::string_view> known, std::string_view whose = "") {
  only_known_keys(section, where, std::span<const std::string_view>(known.begin(), known.size()), whose);
}

// http:// or https:// and a host.
inline bool http_url(std::string_view url) {
  for (const std::string_view scheme : {"http://", "https://"})
    if (url.starts_with(scheme))
      return url.size() > scheme.size() && url[scheme.size()] != '/' &&
             std::none_of(url.begin(), url.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  return false;
}
inline void check_url(std::string_view path, std::string_view url) {
  if (!http_url(url))
    refuse(path, "must be an http:// or https:// URL with a host" + (url.empty() ? std::string() : ", not \"" + std::string(url) + "\""));
}

/// "host:port" (an IPv6 host in brackets: "[::1]:6379") split in two, or
/// nothing when it is not of that form.
inline std::optional<std::pair<std::string, std::uint16_t>> host_and_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  const std::string_view digits = text.substr(colon + 1);
  const auto [end, problem] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (problem != std::errc{} || end != digits.data() + digits.size() || port == 0 || port > 65535) return std::nullopt;
  return std::pair<std::string, std::uint16_t>(std::string(host), static_cast<std::uint16_t>(port));
}

// Reading one section's fields by type; each refusal names "<where>.<key>".
// Ranges are check()'s.
struct config_reader {
  static const boost::json::object& object_at(const boost::json::value& value, std::string_view path) {
    if (const auto* object = value.if_object()) return *object;
    refuse(path, "must be an object");
  }
  static const boost::json::object* object(const boost::json::object& o, std::string_view key, std::string_view where) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return nullptr;
    return &object_at(*field, config_path(where, key));
  }
  static const boost::json::array* array(const boost::json::object& o, std::string_view key, std::string_view where) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return nullptr;
    if (const auto* inner = field->if_array()) return inner;
    refuse(config_path(where, key), "must be an array");
  }
  static std::string string(const boost::json::object& o, std::string_view key, std::string_view where,
                            std::string fallback = {}) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    const auto* text = field->if_string();
    if (!text) refuse(config_path(where, key), "must be a string");
    return text->empty() ? fallback : std::string(*text);
  }
  // A non-negative integer (12.0 is taken too).
  static std::uint64_t count(const boost::json::object& o, std::string_view key, std::string_view where,
                             std::uint64_t fallback) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    if (const auto* u = field->if_uint64()) return *u;
    if (const auto* i = field->if_int64(); i && *i >= 0) return static_cast<std::uint64_t>(*i);
    if (const auto* d = field->if_double();
        d && *d >= 0 && *d <= 9e15 && *d == static_cast<double>(static_cast<std::uint64_t>(*d)))
      return static_cast<std::uint64_t>(*d);
    refuse(config_path(where, key), "must be a non-negative integer");
  }
  // A count for a narrower type: its range is checked before it is narrowed.
  template <class Narrow>
  static Narrow narrow_count(const boost::json::object& o, std::string_view key, std::string_view where,
                             Narrow fallback, Narrow low, Narrow high) {
    const auto value = count(o, key, where, fallback);
    within<std::uint64_t>(config_path(where, key), value, low, high);
    return static_cast<Narrow>(value);
  }
  static bool flag(const boost::json::object& o, std::string_view key, std::string_view where, bool fallback) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    if (!field->is_bool()) refuse(config_path(where, key), "must be true or false");
    return field->get_bool();
  }
  static double number(const boost::json::object& o, std::string_view key, std::string_view where, double fallback) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    if (!field->is_number()) refuse(config_path(where, key), "must be a number");
    return field->to_number<double>();
  }
  // A string, or an array of strings (one string reads as a list of one).
  static std::vector<std::string> strings(const boost::json::object& o, std::string_view key, std::string_view where) {
    const auto* field = o.if_contains(key);
    const std::string path = config_path(where, key);
    std::vector<std::string> out;
    if (!field || field->is_null()) return out;
    if (const auto* one = field->if_string()) {
      out.emplace_back(*one);
      return out;
    }
    const auto* many = field->if_array();
    if (!many) refuse(path, "must be a string or a list of strings");
    for (std::size_t i = 0; i < many->size(); ++i) {
      if (!(*many)[i].is_string()) refuse(path + "[" + std::to_string(i) + "]", "must be a string");
      out.emplace_back((*many)[i].get_string());
    }
    return out;
  }
  // api_key, or the variable api_key_env names (which must be set).
  static std::string secret(const boost::json::object& o, std::string_view where, bool literal_allowed) {
    const std::string variable = string(o, "api_key_env", where);
    if (!variable.empty()) {
      const char* value = std::getenv(variable.c_str());
      if (!value || !*value) refuse(config_path(where, "api_key_env"), "names " + variable + ", which is not set");
      return value;
    }
    const std::string literal = string(o, "api_key", where);
    if (!literal.empty() && !literal_allowed) refuse(config_path(where, "api_key"), "is not allowed here; use api_key_env");
    return literal;
  }
};

}  // namespace llmgate::inline v0::detail
