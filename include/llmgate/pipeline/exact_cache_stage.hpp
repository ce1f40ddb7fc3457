// exact_cache_stage: answers a request whose conversation (normalised) was
// answered before in the same scope; stores what the rest of the pipeline
// answers when nothing did before, and what a later cache stage (the
// semantic one) served, so that the exact repeat of a request answered
// semantically takes the cheaper probe. The cheapest stage: one hash and
// one table probe, so it goes first.
//
// A second level (ExactSecondLevel) is asked on a local miss before the
// rest of the pipeline: the gateway's shared tier, where other gateway
// replicas store what they answered (server/shared/shared_tier.hpp). What it
// answers is kept locally too; what the pipeline answers fresh is stored
// in both; a wrong verdict erases the answer from both.
//
// Given a coalesced_calls table, a miss waits for an identical request's
// call already under way instead of making its own (coalesced_calls.hpp).
//
// The request's cache directives (request_context::cache_control) are
// kept: no-cache asks on and stores the fresh answer in place of the
// stored one, no-store neither looks up nor stores, and an answer older
// than max-age is not served (the fresh one replaces it).
#pragma once

#include <concepts>     // std::same_as
#include <exception>    // std::current_exception
#include <memory>       // std::make_shared
#include <type_traits>  // std::is_same_v
#include <utility>      // std::move

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable
#include <boost/asio/this_coro.hpp>  // boost::asio::this_coro::executor, reset_cancellation_state

#include "llmgate/chat/chat.hpp"  // chat_request, chat_response
#include "llmgate/cache/exact_cache.hpp"
#include "llmgate/pipeline/cached_answer.hpp"
#include "llmgate/pipeline/coalesced_calls.hpp"
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/pipeline/request_scope.hpp"

namespace llmgate::inline v0 {

/// A store of exact answers behind the local cache. find() never throws:
/// a level that cannot answer (away, slow) answers nullptr.
template <class L>
concept ExactSecondLevel = requires(L& level, const exact_key& key, const cached_answer& answer) {
  { level.find(key) } -> std::same_as<boost::asio::awaitable<cached_answer>>;
  level.store(key, answer);
  level.erase(key);
};

/// No second level: the local cache alone.
struct no_second_level {
  boost::asio::awaitable<cached_answer> find(const exact_key&) { co_return nullptr; }
  void store(const exact_key&, const cached_answer&) {}
  void erase(const exact_key&) {}
};

/// ExactCache: an exact_cache<cached_answer, ...>, owned by the caller.
/// SecondLevel: an ExactSecondLevel, kept by value (a small view).
template <class ExactCache, ExactSecondLevel SecondLevel = no_second_level>
class exact_cache_stage {
  // Without one, a local miss costs no coroutine frame for it.
  static constexpr bool has_second_level = !std::is_same_v<SecondLevel, no_second_level>;

 public:
  /// `coalesced`: the table of calls in flight that identical misses wait
  /// for, shared with other stages; null: every miss makes its own call.
  explicit exact_cache_stage(ExactCache& cache, SecondLevel second = {}, coalesced_calls* coalesced = nullptr) noexcept
      : cache_(&cache), second_(std::move(second)), coalesced_(coalesced) {}

  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    const cache_directives control = context.cache_control;
    if (!control.lookup && !control.store) co_return co_await next(request, context);
    exact_key key = cache_->make_key(scope_of(request, context), exact_text_of(request));
    cached_answer answer;
    if (!control.lookup) {
      // no-cache: a fresh answer, stored in place of the one kept
    } else if (auto local = cache_->find(key)) {
      answer = std::move(*local);
    } else if constexpr (has_second_level) {
      answer = co_await second_.find(key);
      if (answer) cache_->insert(key, answer, {.cost = answer->cost_usd});  // the next repeat stays here
    }
    if (answer && !servable(answer, context)) answer = nullptr;  // older than the request's max-age
    if (answer) {
      context.cache = cache_outcome::exact;
      context.similarity = 1;
      // A wrong answer stops serving; the next identical request asks again.
      // The key is not needed here after the lookup: moved, not copied.
      context.feedback = [cache = cache_, second = second_, key = std::move(key)](bool correct) mutable {
        if (correct) return;
        cache->erase(key);
        second.erase(key);
      };
      if (!context.streaming()) co_return cached_response(answer, context);
      co_return co_await serve_cached(answer, context);
    }
    // A miss: the answer is next's, or an identical request's call's.
    const auto executor = co_await boost::asio::this_coro::executor;
    coalesced_calls::ticket ticket(control.lookup ? coalesced_ : nullptr, key, context, executor);
    if (ticket.makes_call()) co_await boost::asio::this_coro::reset_cancellation_state(ticket.cancellation_filter());
    // The waiters get what the call answered, or what it threw (failed()
    // after answered() does nothing).
    try {
      chat_response response = co_await ticket.answer(request, context, next);
      ticket.answered(response, context);
      if (context.cache == cache_outcome::miss && control.store && is_cacheable(response)) {
        cached_answer fresh = stored_answer(response);
        second_.store(key, fresh);
        cache_->insert(key, std::move(fresh), {.cost = response.cost_usd});
      } else if (context.cache == cache_outcome::semantic) {
        promote(std::move(key), response, context);
      }
      co_return response;
    } catch (...) {
      ticket.failed(std::current_exception(), context);
      throw;
    }
  }

 private:
  // Stores a semantic hit under the request's own key, at what the answer
  // cost when it was made (a hit's response says 0), here only: every
  // replica's semantic tier finds it anyway. A wrong verdict then erases
  // the copy as well as telling the stage that served it.
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
  [[no_unique_address]] SecondLevel second_;
  coalesced_calls* coalesced_;
};

template <class ExactCache>
exact_cache_stage(ExactCache&) -> exact_cache_stage<ExactCache>;

template <class ExactCache, ExactSecondLevel SecondLevel>
exact_cache_stage(ExactCache&, SecondLevel) -> exact_cache_stage<ExactCache, SecondLevel>;

template <class ExactCache, ExactSecondLevel SecondLevel>
exact_cache_stage(ExactCache&, SecondLevel, coalesced_calls*) -> exact_cache_stage<ExactCache, SecondLevel>;

}  // namespace llmgate::inline v0
