// backend_error: what a backend throws when a model could not answer. It
// keeps what the gateway and the retry layer need to act: the upstream's
// HTTP status and error object (verbatim, so a client sees the provider's
// own words), whether trying again may help, how long the upstream asked
// us to wait, and whether the upstream refused the request itself (a
// client's mistake: passed on to the client, never retried, never sent to
// another backend, never held against this one's health).
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

  /// Whether the prompt did not fit the model's context (the adapters give
  /// such an error object the code context_length_exceeded).
  bool context_overflow() const noexcept {
    const auto* code = details_->upstream_error.if_contains("code");
    return code && code->is_string() && code->get_string() == "context_length_exceeded";
  }

  /// Whether the upstream refused the request itself, so that it fails the
  /// same way sent again or sent elsewhere: a context overflow, or a 4xx
  /// but 408, 409 and 429 (waiting may cure those) and 401, 403, 404 and
  /// 407 (the gateway's own credentials and configuration with that
  /// upstream, not the request: another backend may serve it).
  bool client_error() const noexcept {
    const unsigned s = details_->status;
    if (context_overflow()) return true;
    return s >= 400 && s < 500 && s != 408 && s != 409 && s != 429 && s != 401 && s != 403 && s != 404 && s != 407;
  }

  /// The status to answer a client_error() with: 400 for a context
  /// overflow (whatever the upstream sent), else the upstream's.
  unsigned client_status() const noexcept { return context_overflow() ? 400 : details_->status; }

  /// The upstream's error object, or, where there is none, an OpenAI-style
  /// one built from this error, whose message names the backend and the
  /// request's URL: for programs and logs. A gateway's clients get
  /// server/client_failure.hpp's client_failure_of instead.
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
