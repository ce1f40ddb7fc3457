// cache_value_traits: how the caches measure an answer and write it into a
// snapshot. Specialise it for your own answer types.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string>       // std::string
#include <type_traits>  // std::is_arithmetic_v, std::is_same_v

#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

/// How a cache measures a Value and saves it in snapshots: the
/// customisation point for your own value types. The primary template
/// counts sizeof(Value) bytes and cannot save. Specialise it with
///   static std::size_t bytes(const Value&);                    // counted against a capacity in bytes
///   static void write(store::snapshot_writer&, const Value&);  // for save()
///   static Value read(store::snapshot_reader&);                // for load(); reading past the
///                                                              // end makes load() refuse the file
template <class Value>
struct cache_value_traits {
  static std::size_t bytes(const Value&) noexcept { return sizeof(Value); }
};

/// Numbers up to 64 bits, saved little-endian.
template <class Value>
  requires(std::is_arithmetic_v<Value> && sizeof(Value) <= 8)
struct cache_value_traits<Value> {
  static std::size_t bytes(const Value&) noexcept { return sizeof(Value); }
  static void write(store::snapshot_writer& out, const Value& value) { out.write(value); }
  static Value read(store::snapshot_reader& in) {
    if constexpr (std::is_same_v<Value, bool>) return in.read<std::uint8_t>() != 0;
    else return in.read<Value>();
  }
};

/// Text answers: the string object and its characters.
template <>
struct cache_value_traits<std::string> {
  static std::size_t bytes(const std::string& value) noexcept {
    return sizeof(std::string) + value.size();
  }
  static void write(store::snapshot_writer& out, const std::string& value) {
    out.write_string(value);
  }
  static std::string read(store::snapshot_reader& in) { return in.read_string(); }
};

}  // namespace llmgate::inline v0
