// served_request: one request as the session answered it, the single record
// the metrics and the request log are fed from (session_options::on_served),
// for every response the gateway writes: a handler's, the dispatch table's
// 401/404/405, the session's 413 and 500.
#pragma once

#include <chrono>       // std::chrono::nanoseconds
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/server/request_outcome.hpp"  // request_outcome

namespace llmgate::inline v0 {

struct served_request {
  std::string_view method;
  std::string_view path;  ///< without the query, which may hold a key
  /// The status written on the wire. 499 (nginx's "client closed request")
  /// when the client left before any of the answer was written.
  unsigned status = 0;
  const std::string* tenant = nullptr;  ///< whose key it carried; nullptr: none known
  std::chrono::nanoseconds latency{};   ///< from the request read to the response written
  bool streamed = false;                ///< written by its handler as it went (SSE)
  bool aborted = false;                 ///< the connection failed before the response was written in full
  const request_outcome* outcome = nullptr;  ///< a chat handler's; nullptr for other routes
};

}  // namespace llmgate::inline v0
