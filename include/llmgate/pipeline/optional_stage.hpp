// optional_stage: a stage switched on or off at run time (from a
// configuration file, say) while the pipeline's shape stays fixed at
// compile time. Switched off, it passes every request straight on.
#pragma once

#include <optional>  // std::optional
#include <utility>   // std::move

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/chat/chat.hpp"  // chat_request, chat_response
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/pipeline/stage.hpp"

namespace llmgate::inline v0 {

template <Stage S>
class optional_stage {
 public:
  optional_stage(S stage, bool enabled) {
    if (enabled) stage_.emplace(std::move(stage));
  }
  /// Present or absent from the start (a router the config may not have).
  explicit optional_stage(std::optional<S> stage) : stage_(std::move(stage)) {}

  bool enabled() const noexcept { return stage_.has_value(); }

  // Not a coroutine: it hands back the stage's awaitable or next's, which
  // the caller awaits at once, so that a request allocates no frame here.
  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    if (stage_) return stage_->handle(request, context, next);
    return next(request, context);
  }

 private:
  std::optional<S> stage_;
};

}  // namespace llmgate::inline v0
