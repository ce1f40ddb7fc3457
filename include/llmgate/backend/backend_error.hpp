// backend_error: what a backend throws when a model could not answer. It
// keeps what the gateway and the retry layer need to act: the upstream's
// HTTP status and error object (verbatim, so a client sees the provider's
// own words), whether trying again may help, and how long the upstream
// asked us to wait.
#pragma once

#include <chrono>    // std::chrono::milliseconds
#include <memory>    // std::shared_ptr, std::make_shared
#include <optional>  // std::optional
#include <string>    // std::string
#include <utility>   // std::move

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

struct backend_error_details {
  std::string backend = {};               ///< name() of the backend that failed
  unsigned status = 0;                    ///< the upstream's HTTP status; 0 when none came
  boost::json::object upstream_error = {};  ///< the upstream's error object, verbatim; may be empty
  bool retryable = false;                 ///< whether the same request may succeed later
  std::optional<std::chrono::milliseconds> retry_after = {};  ///< Retry-After and its kin, when sent
};

/// Thrown by backends. code() is one of errc::upstream_error (an error
/// status), upstream_unreachable, upstream_timeout, upstream_protocol_error
/// or circuit_open. Copies share the details, so copying never throws.
class backend_error : public error {
 public:
  backend_error(errc code, const std::string& message, backend_error_details details)
      : error(code, message),
        details_(std::make_shared<const backend_error_details>(std::move(details))) {}

  const std::string& backend() const noexcept { return details_->backend; }
  unsigned status() const noexcept { return details_->status; }
  bool retryable() const noexcept { return details_->retryable; }
  std::optional<std::chrono::milliseconds> retry_after() const noexcept {
    return details_->retry_after;
  }
  /// The upstream's own error object as it sent it (OpenAI's
  /// {message, type, param, code}; Anthropic's {type, message}); empty when
  /// the failure came before an answer (network, timeout).
  const boost::json::object& upstream_error() const noexcept { return details_->upstream_error; }

  /// What a gateway sends its client: the upstream's error object, or, where
  /// there is none, an OpenAI-style one built from this error.
  boost::json::object error_object() const {
    if (!details_->upstream_error.empty()) return details_->upstream_error;
    return {{"message", what()}, {"type", "upstream_error"}, {"param", nullptr},
            {"code", code_name(static_cast<errc>(code().value()))}};
  }

 private:
  static const char* code_name(errc code) noexcept {
    switch (code) {
      case errc::upstream_unreachable: return "upstream_unreachable";
      case errc::upstream_timeout: return "upstream_timeout";
      case errc::upstream_protocol_error: return "upstream_protocol_error";
      case errc::circuit_open: return "circuit_open";
      default: return "upstream_error";
    }
  }

  std::shared_ptr<const backend_error_details> details_;
};

}  // namespace llmgate::inline v0
