// router_stage: the pipeline stage that picks the request's model with a
// router, when the caller left the choice open (no model, or "auto"). It
// routes on the last user message under the router's default preferences,
// sets request.model to the chosen model's name and passes the request on;
// a thumbs up or down given through context.feedback then reaches the
// router's feedback for that model, task type and domain (unless a later
// stage set its own). Place it after the caches (a cached answer needs no
// model) and before the backend that serves the registry's models:
//
//   llmgate::pipeline answer{llmgate::exact_cache_stage(exact),
//                            llmgate::router_stage(router),
//                            llmgate::backend_stage(models)};
#pragma once

#include <memory>  // std::make_shared
#include <string>  // std::string

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/chat/chat.hpp"  // chat_request, chat_response, content_text
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/route/router.hpp"

namespace llmgate::inline v0 {

/// Router: a basic_router, owned by the caller, alive while the pipeline runs.
template <class Router>
class router_stage {
 public:
  explicit router_stage(Router& router) noexcept : router_(&router) {}

  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    if (!request.model.empty() && request.model != "auto") co_return co_await next(request, context);

    auto decision = std::make_shared<const routing_decision>(router_->route(last_user_text(request)));
    request.model = std::string(decision->model);
    chat_response response = co_await next(request, context);
    if (!context.feedback)
      context.feedback = [router = router_, decision](bool good) { router->feedback(*decision, good); };
    co_return response;
  }

 private:
  static std::string last_user_text(const chat_request& request) {
    for (auto message = request.messages.rbegin(); message != request.messages.rend(); ++message)
      if (message->role == "user") return content_text(*message);
    return {};
  }

  Router* router_;
};

}  // namespace llmgate::inline v0
