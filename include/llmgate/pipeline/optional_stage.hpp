// optional_stage: a stage switched on or off at run time (from a
// configuration file, say) while the pipeline's shape stays fixed at
// compile time. Switched off, it passes every request straight on.
#pragma once

#include <utility>  // std::move

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/chat/chat.hpp"  // chat_request, chat_response
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/pipeline/stage.hpp"

namespace llmgate::inline v0 {

template <Stage S>
class optional_stage {
 public:
  optional_stage(S stage, bool enabled) : stage_(std::move(stage)), enabled_(enabled) {}

  bool enabled() const noexcept { return enabled_; }

  // Not a coroutine: it hands back the stage's awaitable or next's, which
  // the caller awaits at once, so that a request allocates no frame here.
  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    if (enabled_) return stage_.handle(request, context, next);
    return next(request, context);
  }

 private:
  S stage_;
  bool enabled_;
};

}  // namespace llmgate::inline v0
