// limits_config: the config's "limits" section, the bounds a client meets:
// body and header sizes, JSON depth, requests at once and queued,
// connections, the deadlines of a connection's reading (http/session.hpp)
// and the size of an /v1/embeddings request (handlers/embeddings.hpp).
#pragma once

#include <array>        // std::array
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <string_view>  // std::string_view

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/config/config_reader.hpp"  // config_reader, within, only_known_keys
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

struct limits_config {
  std::uint64_t max_body_bytes = 1 << 20;
  std::uint64_t max_concurrent_requests = 256;
  std::uint64_t max_queued_requests = 1024;
  std::uint64_t request_timeout_ms = 120'000;
  std::uint64_t max_header_bytes = 16 * 1024;
  std::uint64_t max_json_depth = 64;  ///< deep enough for real tool schemas
  std::uint64_t max_connections = 10'000;
  std::uint64_t max_connections_per_address = 1'000;
  std::uint64_t idle_timeout_ms = 60'000;
  std::uint64_t header_timeout_ms = 10'000;
  std::uint64_t body_timeout_ms = 60'000;
  std::uint64_t max_embedding_inputs = 2'048;  ///< as OpenAI's /v1/embeddings
  std::uint64_t max_embedding_input_tokens = 300'000;

  /// The section at `where` ("limits"); refuses an unknown key or a value
  /// out of its range, naming it.
  static limits_config read(const boost::json::object& section, std::string_view where);
  void check(std::string_view where) const;
};

namespace detail {

// Each limit with its key and range: the one list read() and check() go by.
struct limit_field {
  std::string_view key;
  std::uint64_t limits_config::*member;
  std::uint64_t low, high;
};
inline constexpr std::array<limit_field, 13> limit_fields = {{
    {"max_body_bytes", &limits_config::max_body_bytes, 1, std::uint64_t{1} << 30},
    {"max_concurrent_requests", &limits_config::max_concurrent_requests, 1, 1'000'000},
    {"max_queued_requests", &limits_config::max_queued_requests, 0, 1'000'000},
    {"request_timeout_ms", &limits_config::request_timeout_ms, 1, 86'400'000},
    {"max_header_bytes", &limits_config::max_header_bytes, 1024, 1 << 20},
    {"max_json_depth", &limits_config::max_json_depth, 1, 1024},
    {"max_connections", &limits_config::max_connections, 1, 10'000'000},
    {"max_connections_per_address", &limits_config::max_connections_per_address, 1, 10'000'000},
    {"idle_timeout_ms", &limits_config::idle_timeout_ms, 1, 86'400'000},
    {"header_timeout_ms", &limits_config::header_timeout_ms, 1, 86'400'000},
    {"body_timeout_ms", &limits_config::body_timeout_ms, 1, 86'400'000},
    {"max_embedding_inputs", &limits_config::max_embedding_inputs, 1, 1'000'000},
    {"max_embedding_input_tokens", &limits_config::max_embedding_input_tokens, 1, 1'000'000'000},
}};

}  // namespace detail

inline limits_config limits_config::read(const boost::json::object& section, std::string_view where) {
  std::array<std::string_view, detail::limit_fields.size()> keys;
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = detail::limit_fields[i].key;
  detail::only_known_keys(section, where, keys);
  limits_config limits;
  for (const auto& field : detail::limit_fields)
    limits.*field.member = detail::config_reader::count(section, field.key, where, limits.*field.member);
  return limits;
}

inline void limits_config::check(std::string_view where) const {
  for (const auto& field : detail::limit_fields)
    detail::within(detail::config_path(where, field.key), this->*field.member, field.low, field.high);
}

}  // namespace llmgate::inline v0
