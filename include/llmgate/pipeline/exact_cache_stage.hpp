// exact_cache_stage: answers a request whose conversation (normalised) was
// answered before in the same scope; stores what the rest of the pipeline
// answers when nothing did before, and what a later cache stage (the
// semantic one) served, so that the exact repeat of a request answered
// semantically takes the cheaper probe. The cheapest stage: one hash and
// one table probe, so it goes first.
#pragma once

#include <memory>   // std::make_shared
#include <utility>  // std::move

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/chat/chat.hpp"  // chat_request, chat_response
#include "llmgate/cache/exact_cache.hpp"
#include "llmgate/pipeline/cached_answer.hpp"
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/pipeline/request_scope.hpp"

namespace llmgate::inline v0 {

/// ExactCache: an exact_cache<cached_answer, ...>, owned by the caller.
template <class ExactCache>
class exact_cache_stage {
 public:
  explicit exact_cache_stage(ExactCache& cache) noexcept : cache_(&cache) {}

  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    exact_key key = cache_->make_key(scope_of(request, context), exact_text_of(request));
    if (auto answer = cache_->find(key)) {
      context.cache = cache_outcome::exact;
      context.similarity = 1;
      // A wrong answer stops serving; the next identical request asks again.
      // The key is not needed here after the lookup: moved, not copied.
      context.feedback = [cache = cache_, key = std::move(key)](bool correct) {
        if (!correct) cache->erase(key);
      };
      if (!context.streaming()) co_return cached_response(*answer, context);
      co_return co_await serve_cached(*answer, context);
    }
    chat_response response = co_await next(request, context);
    if (context.cache == cache_outcome::miss && is_cacheable(response))
      cache_->insert(key, std::make_shared<const chat_response>(response), {.cost = response.cost_usd});
    else if (context.cache == cache_outcome::semantic)
      promote(std::move(key), response, context);
    co_return response;
  }

 private:
  // Stores a semantic hit under the request's own key, at what the answer
  // cost when it was made (a hit's response says 0). A wrong verdict then
  // erases the copy as well as telling the stage that served it.
  void promote(exact_key key, const chat_response& served, request_context& context) {
    auto stored = std::make_shared<chat_response>(served);
    stored->cost_usd = context.saved_usd;
    cache_->insert(key, std::move(stored), {.cost = context.saved_usd});
    context.feedback = [cache = cache_, key = std::move(key), told = std::move(context.feedback)](bool correct) {
      if (!correct) cache->erase(key);
      if (told) told(correct);
    };
  }

  ExactCache* cache_;
};

}  // namespace llmgate::inline v0
