// What a client is answered when the model server failed: the status and
// OpenAI-style error object of a failure a backend threw, shared by the
// chat and embeddings handlers.
#pragma once

#include <exception>  // std::exception_ptr, std::rethrow_exception
#include <string>     // std::string

#include "llmgate/backend/backend_error.hpp"  // backend_error
#include "llmgate/server/openai_errors.hpp"   // openai_error
#include "llmgate/server/responses.hpp"       // json_response

namespace llmgate::inline v0 {

/// 502 with the upstream's own error object for a backend failure, 500
/// for anything else.
inline http_response upstream_error_response(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const backend_error& e) {
    return json_response(http_status::bad_gateway, boost::json::object{{"error", e.error_object()}});
  } catch (const std::exception& e) {
    return json_response(http_status::internal_server_error,
                         openai_error(std::string("The gateway failed: ") + e.what(), "server_error", "internal_error"));
  }
}

}  // namespace llmgate::inline v0
