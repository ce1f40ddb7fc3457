// The Stage concept: one step of a pipeline (a cache, a router, a backend).
//
// A stage is handed the request, its context and the rest of the pipeline
// (`next`), and may answer by itself (a cache hit), change the request or
// the context and pass it on (`co_await next(request, context)`), or look
// at what the rest answered on its way back (a cache storing a miss):
//
//   struct my_stage {
//     template <class Next>
//     boost::asio::awaitable<chat_response> handle(chat_request& request,
//                                                  request_context& context, Next& next) {
//       co_return co_await next(request, context);
//     }
//   };
//
// `next` is a template parameter so that a pipeline's stages call one
// another directly, with no virtual call or std::function between them.
#pragma once

#include <concepts>  // std::same_as

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/chat/chat.hpp"  // chat_request, chat_response
#include "llmgate/pipeline/request_context.hpp"

namespace llmgate::inline v0 {

namespace detail {

/// What a stage's `next` can do: pass a request on and await the answer.
/// Only declared: it checks stages against the concept.
struct next_stage_archetype {
  boost::asio::awaitable<chat_response> operator()(chat_request&, request_context&);
};

}  // namespace detail

template <class S>
concept Stage = requires(S& stage, chat_request& request, request_context& context,
                         detail::next_stage_archetype& next) {
  { stage.handle(request, context, next) } -> std::same_as<boost::asio::awaitable<chat_response>>;
};

}  // namespace llmgate::inline v0
