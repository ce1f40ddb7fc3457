// request_outcome: why a request the evaluation runner sent did not
// answer, in the run records' terms (request_failure): 429 rate_limited,
// 5xx server_error, other 4xx client_error, timeout, unreachable (no
// connection, or the connection was lost: an outage).
//
// The type is classified_failure, not request_outcome: the gateway already
// has a request_outcome (server/request_outcome.hpp) in this namespace.
#pragma once

#include <chrono>     // std::chrono::milliseconds
#include <exception>  // std::exception_ptr, std::rethrow_exception, std::exception
#include <string>     // std::string, std::to_string

#include "llmgate/backend/backend_error.hpp"  // backend_error
#include "llmgate/error.hpp"                  // llmgate::error, errc, error_category
#include "llmgate/eval/run/run_records.hpp"   // request_failure

namespace llmgate::inline v0 {

/// Why a request failed, as it is recorded in a request_result.
struct classified_failure {
  request_failure error = request_failure::none;
  int http_status = 0;  ///< the upstream's status; 0 when none came
  std::string message = {};
};

/// The kind of failure an HTTP status from the upstream is: 429
/// rate_limited, other 4xx client_error, anything else server_error (5xx,
/// or a status no model server should answer a chat request with).
inline request_failure failure_of_status(unsigned status) noexcept {
  if (status == 429) return request_failure::rate_limited;
  if (status >= 400 && status < 500) return request_failure::client_error;
  return request_failure::server_error;
}

/// The kind of failure llmgate's error code is. A broken answer
/// (upstream_protocol_error) is the server's fault: server_error. A backend
/// resting after failures (circuit_open) is not reachable for now.
inline request_failure failure_of_code(errc code, unsigned status) noexcept {
  switch (code) {
    case errc::upstream_timeout: return request_failure::timeout;
    case errc::upstream_unreachable:
    case errc::circuit_open: return request_failure::unreachable;
    case errc::upstream_error: return status != 0 ? failure_of_status(status) : request_failure::server_error;
    default: return request_failure::server_error;
  }
}

/// What `failure`, thrown by a backend's call, says. A backend_error is read
/// by its code and status; another llmgate::error by its code; anything
/// else is a server_error with its message, so that one odd failure is
/// recorded instead of ending the run.
inline classified_failure classify_failure(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const backend_error& e) {
    return {failure_of_code(static_cast<errc>(e.code().value()), e.status()), static_cast<int>(e.status()), e.what()};
  } catch (const error& e) {
    if (e.code().category() != error_category()) return {request_failure::server_error, 0, e.what()};
    return {failure_of_code(static_cast<errc>(e.code().value()), 0), 0, e.what()};
  } catch (const std::exception& e) {
    return {request_failure::server_error, 0, e.what()};
  } catch (...) {
    return {request_failure::server_error, 0, "unknown failure"};
  }
}

/// A request the runner gave up on after the plan's request timeout.
inline classified_failure timeout_failure(std::chrono::milliseconds timeout) {
  return {request_failure::timeout, 0, "no answer within " + std::to_string(timeout.count()) + " ms"};
}

}  // namespace llmgate::inline v0
