// one_of_stage: one of two stage types, chosen at run time (from a
// configuration file, say) while the pipeline's type stays fixed at
// compile time. The gateway's semantic cache is one: its cache type
// depends on the configured embedder (built in, or behind an HTTP API).
// Dispatch is a variant switch per request: no virtual call, no
// allocation.
#pragma once

#include <concepts>  // std::same_as
#include <cstddef>   // std::size_t
#include <utility>   // std::move, std::in_place_index
#include <variant>   // std::variant, std::visit

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/chat/chat.hpp"                 // chat_request, chat_response
#include "llmgate/pipeline/request_context.hpp"  // request_context
#include "llmgate/pipeline/stage.hpp"            // Stage

namespace llmgate::inline v0 {

template <Stage A, Stage B>
  requires(!std::same_as<A, B>)
class one_of_stage {
 public:
  explicit one_of_stage(A stage) : stage_(std::in_place_index<0>, std::move(stage)) {}
  explicit one_of_stage(B stage) : stage_(std::in_place_index<1>, std::move(stage)) {}

  /// 0 when it holds an A, 1 when a B.
  std::size_t index() const noexcept { return stage_.index(); }

  // Not a coroutine: it hands back the chosen stage's awaitable.
  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    return std::visit([&](auto& stage) { return stage.handle(request, context, next); }, stage_);
  }

 private:
  std::variant<A, B> stage_;
};

}  // namespace llmgate::inline v0
