// backend_stage: the stage that answers, by calling a model. Streams when
// the caller streams (the context has an on_chunk), completes otherwise.
// For an ordered fallback list, give it a backend that is one.
#pragma once

#include <string>  // std::string

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/backend/backend.hpp"
#include "llmgate/chat/chat.hpp"  // chat_request, chat_response
#include "llmgate/pipeline/request_context.hpp"

namespace llmgate::inline v0 {

/// B: a Backend, owned by the caller.
template <Backend B>
class backend_stage {
 public:
  explicit backend_stage(B& backend) noexcept : backend_(&backend) {}

  /// Never calls `next`: a backend answers or throws backend_error.
  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next&) {
    context.backend = std::string(backend_->name());  // known to the caller before the first chunk
    // Two statements, not `?:`: GCC 12 miscompiles co_await inside a conditional expression.
    chat_response response;
    if (context.streaming()) response = co_await backend_->stream(request, context.on_chunk);
    else response = co_await backend_->complete(request);
    if (!response.backend.empty()) context.backend = response.backend;  // a fallback list's member
    co_return response;
  }

 private:
  B* backend_;
};

}  // namespace llmgate::inline v0
