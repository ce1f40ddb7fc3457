// Reading fields out of JSON a client or a model server sent, with the
// checks every parser here needs: absent is fine where the protocol says
// so, a present field of the wrong type is an error that names the field.
#pragma once

#include <cstdint>      // std::uint64_t, std::int64_t
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/object.hpp>  // boost::json::object
#include <boost/json/value.hpp>   // boost::json::value

#include "llmgate/error.hpp"

namespace llmgate::inline v0::detail {

namespace json = boost::json;

/// Throws llmgate::error(code) with "<where> <what>" as its context.
[[noreturn]] inline void fail(errc code, std::string_view where, std::string_view what) {
  throw error(code, std::string(where) + " " + std::string(what));
}

/// The object `value` holds, or an error naming `where`.
inline const json::object& as_object(const json::value& value, std::string_view where, errc code) {
  if (const auto* object = value.if_object()) return *object;
  fail(code, where, "must be an object");
}

/// The string field `key`, or "" where it is absent or null.
inline std::string string_field(const json::object& object, std::string_view key,
                                std::string_view where, errc code) {
  const auto* field = object.if_contains(key);
  if (!field || field->is_null()) return {};
  if (const auto* text = field->if_string()) return std::string(*text);
  fail(code, std::string(where) + "." + std::string(key), "must be a string");
}

/// The non-negative integer field `key` (token counts), or 0 where absent
/// or null. Servers write counts as integers; 12.0 is taken too.
inline std::uint64_t count_field(const json::object& object, std::string_view key,
                                 std::string_view where, errc code) {
  const auto* field = object.if_contains(key);
  if (!field || field->is_null()) return 0;
  if (const auto* u = field->if_uint64()) return *u;
  if (const auto* i = field->if_int64(); i && *i >= 0) return static_cast<std::uint64_t>(*i);
  if (const auto* d = field->if_double(); d && *d >= 0 && *d <= 9e15 && *d == static_cast<double>(static_cast<std::uint64_t>(*d)))
    return static_cast<std::uint64_t>(*d);
  fail(code, std::string(where) + "." + std::string(key), "must be a non-negative integer");
}

/// The object field `key`, or nullptr where absent or null.
inline const json::object* object_field(const json::object& object, std::string_view key,
                                        std::string_view where, errc code) {
  const auto* field = object.if_contains(key);
  if (!field || field->is_null()) return nullptr;
  if (const auto* inner = field->if_object()) return inner;
  fail(code, std::string(where) + "." + std::string(key), "must be an object");
}

/// The array field `key`, or nullptr where absent or null.
inline const json::array* array_field(const json::object& object, std::string_view key,
                                      std::string_view where, errc code) {
  const auto* field = object.if_contains(key);
  if (!field || field->is_null()) return nullptr;
  if (const auto* inner = field->if_array()) return inner;
  fail(code, std::string(where) + "." + std::string(key), "must be an array");
}

}  // namespace llmgate::inline v0::detail
