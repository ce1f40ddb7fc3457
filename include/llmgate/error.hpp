// llmgate's own error codes, their std::error_category, and the exception
// thrown at API edges. Hot paths return std::error_code; functions that
// throw document it and throw llmgate::error, which carries the same code.
#pragma once

#include <string>        // std::string
#include <system_error>  // std::error_code, std::error_category, std::system_error
#include <type_traits>   // std::true_type

#include "llmgate/version.hpp"

namespace llmgate::inline v0 {

enum class errc {
  dimension_mismatch = 1,  ///< a vector's length differs from the index's
  duplicate_id,            ///< an id is added that the index already holds
  unknown_id,              ///< an id the index does not hold
  io_failure,              ///< the operating system refused a read or write
  not_a_llmgate_file,      ///< the file does not start with llmgate's magic
  unsupported_version,     ///< written by a newer format than this build reads
  checksum_mismatch,       ///< the bytes were changed after they were written
  truncated_file,          ///< the file ends before its content does
  corrupt_file,            ///< checksum fine but the content is inconsistent
  wrong_kind_of_file,      ///< another llmgate structure, metric or dimension
  invalid_request,         ///< a chat or embedding request has a wrong type or misses a field
  upstream_error,          ///< a model server answered with an error status
  upstream_unreachable,    ///< a model server could not be reached or dropped the connection
  upstream_timeout,        ///< a model server took longer than a timeout allows
  upstream_protocol_error, ///< a model server's answer breaks its protocol (bad JSON, SSE, size)
  circuit_open,            ///< a backend is resting after repeated failures
  not_supported,           ///< the object cannot do this by design (e.g. external_embedder::embed)
  store_unreachable,       ///< the shared store (Redis) could not be reached, refused the login or dropped the connection
  store_timeout,           ///< the shared store took longer than a timeout allows
  store_error,             ///< the shared store answered with an error, or broke its protocol
};

namespace detail {

class error_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "llmgate"; }

  std::string message(int code) const override {
    switch (static_cast<errc>(code)) {
      case errc::dimension_mismatch: return "vector dimension does not match the index";
      case errc::duplicate_id: return "id is already in the index";
      case errc::unknown_id: return "id is not in the index";
      case errc::io_failure: return "file could not be read or written";
      case errc::not_a_llmgate_file: return "not an llmgate file (bad magic)";
      case errc::unsupported_version: return "file format version is not supported by this build";
      case errc::checksum_mismatch: return "file checksum does not match its content (corrupt file)";
      case errc::truncated_file: return "file is truncated";
      case errc::corrupt_file: return "file content is inconsistent (corrupt file)";
      case errc::wrong_kind_of_file: return "file holds a different structure, metric or dimension";
      case errc::invalid_request: return "invalid request";
      case errc::upstream_error: return "model server answered with an error";
      case errc::upstream_unreachable: return "model server unreachable or connection lost";
      case errc::upstream_timeout: return "model server timed out";
      case errc::upstream_protocol_error: return "model server's answer breaks its protocol";
      case errc::circuit_open: return "backend circuit breaker is open";
      case errc::not_supported: return "operation not supported by this object";
      case errc::store_unreachable: return "shared store (Redis) unreachable, login refused or connection lost";
      case errc::store_timeout: return "shared store (Redis) timed out";
      case errc::store_error: return "shared store (Redis) answered with an error";
    }
    return "unknown llmgate error";
  }
};

}  // namespace detail

inline const std::error_category& error_category() noexcept {
  static const detail::error_category_impl category;
  return category;
}

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

/// Thrown at API edges (loading files, constructing from bad arguments).
/// `code()` tells which errc; `what()` names the operation and the cause.
class error : public std::system_error {
 public:
  error(std::error_code code, const std::string& context) : std::system_error(code, context) {}
  error(errc code, const std::string& context) : std::system_error(make_error_code(code), context) {}
};

}  // namespace llmgate::inline v0

template <>
struct std::is_error_code_enum<llmgate::errc> : std::true_type {};
