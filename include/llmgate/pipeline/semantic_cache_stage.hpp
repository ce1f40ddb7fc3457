// semantic_cache_stage: answers a request with the stored answer of an
// earlier request that means the same, in the same scope; stores what the
// rest of the pipeline answers otherwise. The scope is the context's tenant
// with the request's model, answer-changing parameters and system prompt
// (request_scope.hpp); what is compared within it is up to the cache's
// KeyPolicy (the last user turn by default).
//
// A lookup takes the cache's three steps, and holds nothing of the cache
// while it embeds: the key, the embedding, the search under the cache's
// lock; a miss then stores the answer with the lookup's vector.
//   semantic_cache_stage(cache)            embeds with the cache's own
//       Embedder (cache.embed()), on the io thread. For in-process
//       embedders (hashing_embedder): they never wait on anything.
//   semantic_cache_stage(cache, embedder)  awaits an AsyncEmbedder
//       (async_http_embedder), so that the io thread serves other requests
//       while this one waits for its vector. The cache's own embedder is
//       then external_embedder{dimension} (it never embeds), or one that
//       makes the same vectors; a learning embedder (hashing_embedder)
//       would make search() embed every request again under the lock.
// An embedding that fails (the embeddings server down) makes a miss, and
// the answer is then not stored: the cache could never find it.
//
// The request's cache directives are kept as the exact stage keeps them:
// no-cache embeds and stores without searching, no-store skips the stage,
// and a hit older than max-age is a miss.
#pragma once

#include <memory>       // std::make_shared
#include <string>       // std::string, std::to_string
#include <type_traits>  // std::is_same_v
#include <utility>      // std::move

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/backend/async_embedder.hpp"  // AsyncEmbedder, embedding_result
#include "llmgate/chat/chat.hpp"               // chat_request, chat_response
#include "llmgate/cache/semantic_cache.hpp"    // looked_up_vector, lookup_outcome
#include "llmgate/error.hpp"                   // llmgate::error, errc::dimension_mismatch
#include "llmgate/pipeline/cached_answer.hpp"  // serve_cached, is_cacheable
#include "llmgate/pipeline/request_context.hpp"  // request_context, cache_outcome
#include "llmgate/pipeline/request_scope.hpp"  // scope_of, conversation_of

namespace llmgate::inline v0 {

namespace detail {

/// The second parameter of a semantic_cache_stage that embeds with its
/// cache's own embedder.
struct cache_embedder {};

}  // namespace detail

/// SemanticCache: a basic_semantic_cache<cached_answer, ...>, owned by the
/// caller. Embedding: detail::cache_embedder, or an AsyncEmbedder, kept by
/// value (copies of async_http_embedder share their backend and batching).
template <class SemanticCache, class Embedding = detail::cache_embedder>
class semantic_cache_stage {
  static constexpr bool own_embedder = std::is_same_v<Embedding, detail::cache_embedder>;
  static_assert(own_embedder || AsyncEmbedder<Embedding>,
                "semantic_cache_stage: the second argument must model AsyncEmbedder "
                "(llmgate/backend/async_embedder.hpp)");

 public:
  explicit semantic_cache_stage(SemanticCache& cache) noexcept
    requires own_embedder
      : cache_(&cache) {}

  /// Throws llmgate::error(errc::dimension_mismatch) when the embedder's
  /// vectors are not of the cache's dimension.
  semantic_cache_stage(SemanticCache& cache, Embedding embedder)
    requires(!own_embedder)
      : cache_(&cache), embedder_(std::move(embedder)) {
    if (embedder_.dimension() != cache.embedder().dimension())
      throw error(errc::dimension_mismatch, "semantic_cache_stage: the embedder makes vectors of " +
                                                std::to_string(embedder_.dimension()) + " floats, the cache holds " +
                                                std::to_string(cache.embedder().dimension()));
  }

  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    const cache_directives control = context.cache_control;
    if (!control.lookup && !control.store) co_return co_await next(request, context);
    // The key is kept by value: a later stage may change the context's scope.
    const auto key = cache_->key(scope_of(request, context), conversation_of(request));
    looked_up_vector vector;
    if constexpr (own_embedder) {
      vector = cache_->embed(key.text);  // in process, with no cache lock held: no frame to await
    } else {
      embedding_result embedded = co_await embedder_.embed(key.text);
      vector = looked_up_vector::of(key.text, std::move(embedded.vector));
    }
    typename SemanticCache::lookup_result found;
    if (!control.lookup) {
      found.request = std::move(vector);  // no-cache: not searched, stored with this vector
    } else if (!control.max_age) {
      found = cache_->search(key, std::move(vector));
    } else {
      found = cache_->search(key, vector);  // kept: a hit too old to serve is stored anew with it
      if (found.outcome == lookup_outcome::hit && !servable(*found.answer, context)) {
        found.outcome = lookup_outcome::miss;
        found.request = std::move(vector);
      }
    }
    context.similarity = found.similarity;
    if (found.outcome == lookup_outcome::hit) {
      context.cache = cache_outcome::semantic;
      const cached_answer answer = *found.answer;
      // The lookup (its vector included) is moved into the report, not copied.
      context.feedback = [cache = cache_, found = std::move(found)](bool correct) { cache->feedback(found, correct); };
      if (!context.streaming()) co_return cached_response(answer, context);  // no frame of serve_cached's
      co_return co_await serve_cached(answer, context);
    }
    // A miss, or an explore (the policy wants a fresh answer to learn from): ask on.
    const bool embedded = own_embedder || !found.request.values.empty();
    chat_response response = co_await next(request, context);
    if (context.cache == cache_outcome::miss && control.store && embedded && is_cacheable(response))
      cache_->insert(std::move(found), key,  // the lookup's vector, not a second embedding
                     stored_answer(response),
                     answer_cost{.prompt_tokens = response.usage.prompt_tokens,
                                 .completion_tokens = response.usage.completion_tokens,
                                 .usd = response.cost_usd});
    co_return response;
  }

 private:
  SemanticCache* cache_;
  [[no_unique_address]] Embedding embedder_{};
};

template <class SemanticCache>
semantic_cache_stage(SemanticCache&) -> semantic_cache_stage<SemanticCache>;

template <class SemanticCache, AsyncEmbedder Embedding>
semantic_cache_stage(SemanticCache&, Embedding) -> semantic_cache_stage<SemanticCache, Embedding>;

}  // namespace llmgate::inline v0
