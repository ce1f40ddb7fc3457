// semantic_cache_stage: answers a request with the stored answer of an
// earlier request that means the same, in the same scope; stores what the
// rest of the pipeline answers otherwise. The scope is the context's tenant
// with the request's model, answer-changing parameters and system prompt
// (request_scope.hpp); what is compared within it is up to the cache's
// KeyPolicy (the last user turn by default).
#pragma once

#include <memory>   // std::make_shared
#include <utility>  // std::move

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/chat/chat.hpp"  // chat_request, chat_response
#include "llmgate/cache/semantic_cache.hpp"
#include "llmgate/pipeline/cached_answer.hpp"
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/pipeline/request_scope.hpp"

namespace llmgate::inline v0 {

/// SemanticCache: a basic_semantic_cache<cached_answer, ...>, owned by the caller.
template <class SemanticCache>
class semantic_cache_stage {
 public:
  explicit semantic_cache_stage(SemanticCache& cache) noexcept : cache_(&cache) {}

  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    // The context keeps it, so the reference outlives the awaits below.
    const cache_scope& scope = scope_of(request, context);
    const auto conversation = conversation_of(request);
    auto found = cache_->lookup(scope, conversation);
    context.similarity = found.similarity;
    if (found.outcome == lookup_outcome::hit) {
      context.cache = cache_outcome::semantic;
      context.feedback = [cache = cache_, found](bool correct) { cache->feedback(found, correct); };
      co_return co_await serve_cached(*found.answer, context);
    }
    // A miss, or an explore (the policy wants a fresh answer to learn from): ask on.
    chat_response response = co_await next(request, context);
    if (context.cache == cache_outcome::miss && is_cacheable(response))
      cache_->insert(std::move(found), scope, conversation,  // the lookup's vector, not a second embedding
                     std::make_shared<const chat_response>(response),
                     answer_cost{.prompt_tokens = response.usage.prompt_tokens,
                                 .completion_tokens = response.usage.completion_tokens,
                                 .usd = response.cost_usd});
    co_return response;
  }

 private:
  SemanticCache* cache_;
};

}  // namespace llmgate::inline v0
