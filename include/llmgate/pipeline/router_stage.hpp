// router_stage: the pipeline stage that picks the request's model with a
// router, when the caller left the choice open (no model, "auto", or one
// of the aliases in its options). It routes on the last user message under
// the request's own preferences (context.route_preferences) or else the
// router's defaults, sets request.model to the chosen model's name, keeps
// the decision in context.route and passes the request on; a thumbs up or
// down on a fresh answer, given through context.feedback, then reaches the
// router's feedback for that model, task type and domain. A verdict on a
// cached answer goes to the cache stage that served it alone: it judges
// the match, not the model.
//
// Where it goes: before the caches, the cache scope holds the chosen
// model, so a routed request shares answers with requests that name that
// model, and a change of routing (after feedback) never serves another
// model's stored answer; the router then runs on hits too. After the
// caches, "auto" is a scope of its own and a hit skips the router:
//
//   llmgate::pipeline answer{llmgate::router_stage(router),
//                            llmgate::exact_cache_stage(exact),
//                            llmgate::backend_stage(models)};
#pragma once

#include <algorithm>  // std::find
#include <memory>     // std::make_shared
#include <string>     // std::string
#include <utility>    // std::move
#include <vector>     // std::vector

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/chat/chat.hpp"  // chat_request, chat_response, content_text
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/route/preferences.hpp"
#include "llmgate/route/router.hpp"

namespace llmgate::inline v0 {

struct router_stage_options {
  /// Model names that ask the router to choose, besides "" and "auto".
  std::vector<std::string> aliases = {};
};

/// Router: a basic_router or a predictive_router (anything whose
/// route(text) gives a routing_decision), owned by the caller, alive while
/// the pipeline runs.
template <class Router>
class router_stage {
 public:
  explicit router_stage(Router& router, router_stage_options options = {}) noexcept
      : router_(&router), options_(std::move(options)) {}

  /// Whether a request for `model` is routed.
  bool routes(const std::string& model) const noexcept {
    return model.empty() || model == "auto" ||
           std::find(options_.aliases.begin(), options_.aliases.end(), model) != options_.aliases.end();
  }

  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    if (!routes(request.model)) co_return co_await next(request, context);

    auto decision = std::make_shared<const routing_decision>(decide(last_user_text(request), context));
    request.model = std::string(decision->model);
    context.route = decision;
    chat_response response = co_await next(request, context);
    // A verdict on a cached answer judges the cache's match, not the model:
    // only a fresh answer's verdict reaches the router (one that takes them).
    if constexpr (takes_feedback) {
      if (context.cache == cache_outcome::miss) {
        auto to_router = [router = router_, decision = std::move(decision)](bool good) { router->feedback(*decision, good); };
        if (!context.feedback)
          context.feedback = std::move(to_router);
        else
          context.feedback = [later = std::move(context.feedback), to_router = std::move(to_router)](bool good) {
            later(good);
            to_router(good);
          };
      }
    }
    co_return response;
  }

 private:
  static constexpr bool takes_feedback = requires(Router& r, const routing_decision& d) { r.feedback(d, true); };

  // Under the request's own preferences where it has them and the router
  // weighs preferences (a predictive_router's target is fixed when it learns).
  routing_decision decide(const std::string& text, const request_context& context) const {
    if constexpr (requires(const Router& r, const preferences& p) { r.route(text, p); })
      if (context.route_preferences) return router_->route(text, *context.route_preferences);
    return router_->route(text);
  }

  static std::string last_user_text(const chat_request& request) {
    for (auto message = request.messages.rbegin(); message != request.messages.rend(); ++message)
      if (message->role == "user") return content_text(*message);
    return {};
  }

  Router* router_;
  router_stage_options options_;
};

}  // namespace llmgate::inline v0
