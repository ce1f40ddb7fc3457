// coalesced_calls: identical requests that miss the cache at the same time
// make one call down the pipeline, not one each (a retry storm, a popular
// prompt). As nginx's proxy_cache_lock does for an HTTP cache, but the
// others do not wait for the whole answer: each is streamed it from its
// start as it arrives.
//
// Identical: the same exact-cache key (scope, tenant and normalised
// conversation; exact_cache.hpp), so the exact cache stage, which has the
// key at hand, asks here on a miss (exact_cache_stage.hpp). The first such
// request makes the call itself, in its own coroutine, at no cost beyond
// an entry in this table; those that come while it runs wait for it and
// are woken, on their own executors, as its chunks and its answer come.
//
// No waiter's hang-up or timeout ends the call for the others. A waiter
// that goes just stops waiting. The request making the call keeps making
// it while others wait: a cancellation (its client gone, its deadline
// passed) is held back then, the call is taken out of the table so that no
// one else joins it, and once the answer is in (the model servers' own
// timeouts bound how long that takes) the request ends as its own client's
// state says: a 504 past its deadline, nothing for a client that has gone.
// Alone, it is cancelled at once, as any request. A failure reaches every waiter
// as the same error (each throws a copy of its own).
//
// The request that made the call is its miss: charged, and stored by the
// cache stages. The others are cache_outcome::coalesced: charged nothing
// (saved_usd is what the answer cost), stored by no one.
#pragma once

#include <cstddef>       // std::size_t, std::ptrdiff_t
#include <cstdint>       // std::uint64_t
#include <exception>     // std::exception_ptr, std::rethrow_exception
#include <functional>    // std::function
#include <memory>        // std::shared_ptr, std::make_shared
#include <mutex>         // std::mutex, std::lock_guard
#include <optional>      // std::optional
#include <stdexcept>     // std::runtime_error
#include <string>        // std::string
#include <system_error>  // std::system_error
#include <utility>       // std::move, std::pair
#include <vector>        // std::vector

#include <boost/asio/any_io_executor.hpp>      // boost::asio::any_io_executor
#include <boost/asio/as_tuple.hpp>             // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>            // boost::asio::awaitable
#include <boost/asio/cancellation_type.hpp>    // boost::asio::cancellation_type
#include <boost/asio/post.hpp>                 // boost::asio::post
#include <boost/asio/steady_timer.hpp>         // boost::asio::steady_timer
#include <boost/asio/this_coro.hpp>            // boost::asio::this_coro
#include <boost/asio/use_awaitable.hpp>        // boost::asio::use_awaitable
#include <boost/unordered/unordered_flat_map.hpp>  // the calls by hash, without a node each

#include "llmgate/backend/backend_error.hpp"     // backend_error, llmgate::error: failures copied by type
#include "llmgate/cache/exact_cache.hpp"         // exact_key
#include "llmgate/chat/chat.hpp"                 // chat_request, chat_response, chat_chunk
#include "llmgate/pipeline/cached_answer.hpp"    // detail::replay_as_chunks
#include "llmgate/pipeline/request_context.hpp"  // request_context, cache_outcome

namespace llmgate::inline v0 {

namespace detail {

// One call in flight and the requests waiting for it; thread-safe.
class coalesced_call {
 public:
  // Wakes a waiter, on the waiter's executor, by cancelling its wait.
  using wake_timer = boost::asio::steady_timer;

  // What a waiter has not seen yet: the chunks after the first `seen`.
  struct news {
    std::vector<chat_chunk> chunks;
    bool done = false;
  };

  // `key` is the caller's, which outlives the call's time in the table.
  coalesced_call(const exact_key& key, std::uint64_t serial, bool streams)
      : key_(&key), serial_(serial), streams_(streams) {}

  const exact_key& key() const noexcept { return *key_; }
  std::uint64_t serial() const noexcept { return serial_; }  // tells calls of one key apart
  bool streams() const noexcept { return streams_; }

  // The waiters' side (the caller that makes the call is not one).
  void add_waiter(std::shared_ptr<wake_timer> wake, bool streaming) {
    std::lock_guard lock(mutex_);
    waiters_.push_back({std::move(wake), streaming});
  }
  void remove_waiter(const std::shared_ptr<wake_timer>& wake) {
    std::lock_guard lock(mutex_);
    std::erase_if(waiters_, [&](const waiter& w) { return w.wake == wake; });
  }
  std::size_t waiting() const {
    std::lock_guard lock(mutex_);
    return waiters_.size();
  }
  news since(std::size_t seen) const {
    std::lock_guard lock(mutex_);
    return {{chunks_.begin() + static_cast<std::ptrdiff_t>(seen), chunks_.end()}, done_};
  }
  // After done: the answer and what it cost when it was made, or throws
  // the failure.
  std::pair<chat_response, double> answer() const {
    std::lock_guard lock(mutex_);
    if (throw_failure_) throw_failure_();
    return {*answer_, cost_usd_};
  }

  // The caller's side.
  void publish(const chat_chunk& chunk) {
    std::lock_guard lock(mutex_);
    chunks_.push_back(chunk);
    wake(/*streaming_only=*/true);
  }
  void finish(const chat_response& answer, double cost_usd) {
    std::lock_guard lock(mutex_);
    if (!waiters_.empty()) answer_ = answer;  // alone: nobody to copy it for
    cost_usd_ = cost_usd;
    end();
  }
  void fail(std::exception_ptr failure) {
    std::function<void()> thrower = thrower_of(std::move(failure));
    std::lock_guard lock(mutex_);
    throw_failure_ = std::move(thrower);
    end();
  }

 private:
  struct waiter {
    std::shared_ptr<wake_timer> wake;
    bool streaming;
  };

  // A function that throws a copy of `failure`, of its type where the
  // gateway tells types apart: one exception object rethrown on several
  // threads would be read by all while the last one destroys it.
  static std::function<void()> thrower_of(std::exception_ptr failure) {
    try {
      std::rethrow_exception(std::move(failure));
    } catch (const backend_error& e) {
      return [e] { throw e; };
    } catch (const error& e) {
      return [e] { throw e; };
    } catch (const std::system_error& e) {
      return [e] { throw e; };
    } catch (const std::exception& e) {
      return [what = std::string(e.what())] { throw std::runtime_error(what); };
    } catch (...) {
      return [] { throw std::runtime_error("the model call failed"); };
    }
  }

  void end() {  // under the mutex
    done_ = true;
    wake(/*streaming_only=*/false);
  }
  // Under the mutex. A wake that comes while its waiter is not waiting is
  // harmless: the waiter reads since() before it waits again.
  void wake(bool streaming_only) {
    for (const auto& w : waiters_)
      if (w.streaming || !streaming_only)
        boost::asio::post(w.wake->get_executor(), [timer = w.wake] { timer->cancel(); });
  }

  const exact_key* key_;
  const std::uint64_t serial_;
  const bool streams_;
  mutable std::mutex mutex_;
  std::vector<waiter> waiters_;
  std::vector<chat_chunk> chunks_;  // kept only while the caller streams
  std::optional<chat_response> answer_;
  double cost_usd_ = 0;
  std::function<void()> throw_failure_;  // set when the call failed
  bool done_ = false;
};

}  // namespace detail

/// The calls in flight, shared by every worker's exact cache stage.
class coalesced_calls {
 public:
  struct statistics {
    std::size_t calls = 0;        ///< calls in flight
    std::size_t waiting = 0;      ///< requests waiting for them (not those making them)
    std::uint64_t coalesced = 0;  ///< requests answered by another's call, since the start
  };

  coalesced_calls() = default;
  coalesced_calls(const coalesced_calls&) = delete;
  coalesced_calls& operator=(const coalesced_calls&) = delete;

  statistics stats() const {
    std::lock_guard lock(mutex_);
    statistics s{.calls = calls_.size(), .coalesced = coalesced_};
    for (const auto& [hash, call] : calls_) s.waiting += call->waiting();
    return s;
  }

  /// The answer to the request whose exact-cache key is `key` (which must
  /// outlive the awaitable), asked on `executor`, the request's: from
  /// next(request, context) when no identical request is being answered,
  /// else from that one's call (context.cache is then coalesced). Not a
  /// coroutine: the request that makes the call awaits one frame, not two.
  template <class Next>
  boost::asio::awaitable<chat_response> answer(const exact_key& key, const boost::asio::any_io_executor& executor,
                                               chat_request& request, request_context& context, Next& next) {
    auto [call, wake] = join(key, context.streaming(), executor);
    if (!wake) return make_call(std::move(call), request, context, next);
    // Before the first chunk, whose headers say so.
    context.cache = cache_outcome::coalesced;
    context.similarity = 1;
    return wait_for(std::move(call), std::move(wake), context);
  }

 private:
  using call_pointer = std::shared_ptr<detail::coalesced_call>;

  static std::uint64_t hash_of(const exact_key& key) noexcept { return key.hash.low ^ key.hash.high; }

  using wake_pointer = std::shared_ptr<detail::coalesced_call::wake_timer>;

  // The call of this key to wait for, with the timer that wakes the
  // waiter on `executor`; or a new call for the caller to make (no timer),
  // entered in the table unless another key's call holds its hash (a
  // collision of 64 bits: that request then makes its call alone).
  std::pair<call_pointer, wake_pointer> join(const exact_key& key, bool streaming,
                                             const boost::asio::any_io_executor& executor) {
    const std::uint64_t hash = hash_of(key);
    std::lock_guard lock(mutex_);
    auto call = std::make_shared<detail::coalesced_call>(key, ++serial_, streaming);
    const auto [at, entered] = calls_.try_emplace(hash, call);
    if (entered) return {std::move(call), nullptr};
    const exact_key& other = at->second->key();
    if (other.scope != key.scope || other.tenant != key.tenant || other.text != key.text)
      return {std::move(call), nullptr};
    auto wake = std::make_shared<detail::coalesced_call::wake_timer>(executor,
                                                                     detail::coalesced_call::wake_timer::time_point::max());
    at->second->add_waiter(wake, streaming);
    ++coalesced_;
    return {at->second, std::move(wake)};
  }

  // Takes `call` out of the table: later requests make a call of their own.
  void forget(const call_pointer& call) {
    std::lock_guard lock(mutex_);
    erase(call);
  }
  void erase(const call_pointer& call) {  // under the mutex
    const auto at = calls_.find(hash_of(call->key()));
    if (at != calls_.end() && at->second == call) calls_.erase(at);
  }

  // Whether a cancellation of the caller making the call of `hash` and
  // `serial` goes through now: not while others wait for it (the call is
  // then taken out of the table, so that no one else joins a call whose
  // caller has gone); always once the call has ended.
  bool cancel_through(std::uint64_t hash, std::uint64_t serial) {
    std::lock_guard lock(mutex_);  // no one joins between the count and the erase
    const auto at = calls_.find(hash);
    if (at == calls_.end() || at->second->serial() != serial) return true;
    const bool alone = at->second->waiting() == 0;
    calls_.erase(at);
    return alone;
  }

  // The caller makes the call, its chunks and answer published to those
  // that join meanwhile.
  template <class Next>
  boost::asio::awaitable<chat_response> make_call(call_pointer call, chat_request& request, request_context& context,
                                                  Next& next) {
    // A cancellation is held back while others wait (cancel_through). The
    // filter stays with the coroutine after this call: once the call is
    // gone it lets a terminal cancellation through, as the default does.
    // It holds only numbers and a pointer, nothing a co_await temporary
    // destroyed twice could corrupt (GCC 12 does that to some; upstream.hpp).
    co_await boost::asio::this_coro::reset_cancellation_state(
        [this, hash = hash_of(call->key()), serial = call->serial()](boost::asio::cancellation_type wanted) {
          wanted &= boost::asio::cancellation_type::terminal;
          return wanted == boost::asio::cancellation_type::none || cancel_through(hash, serial)
                     ? wanted
                     : boost::asio::cancellation_type::none;
        });
    // A stream goes to those waiting too; the caller's own client going
    // away ends it only when no one else waits.
    std::exception_ptr own_client_failure;
    chunk_handler own_client = std::move(context.on_chunk);
    if (own_client)
      context.on_chunk = [&](const chat_chunk& chunk) -> boost::asio::awaitable<void> {
        call->publish(chunk);
        if (own_client_failure) co_return;
        try {
          co_await own_client(chunk);
        } catch (...) {
          if (call->waiting() == 0) throw;
          own_client_failure = std::current_exception();
        }
      };
    chat_response response;
    try {
      response = co_await next(request, context);
    } catch (...) {
      forget(call);
      call->fail(std::current_exception());
      context.on_chunk = std::move(own_client);
      throw;
    }
    forget(call);
    call->finish(response, context.cache == cache_outcome::miss ? response.cost_usd : context.saved_usd);
    context.on_chunk = std::move(own_client);
    if (own_client_failure) std::rethrow_exception(own_client_failure);
    co_return response;
  }

  // Streams the call's chunks to a waiting request as they come (when both
  // stream), then returns the call's answer as this request's.
  static boost::asio::awaitable<chat_response> wait_for(call_pointer call, wake_pointer wake,
                                                        request_context& context) {
    struct leaving {  // however this request ends: answered, failed, cancelled
      const call_pointer& call;
      const wake_pointer& wake;
      ~leaving() { call->remove_waiter(wake); }
    } leave{call, wake};
    const bool relay = context.streaming() && call->streams();
    std::size_t seen = 0;
    for (;;) {
      detail::coalesced_call::news news = call->since(seen);
      if (news.chunks.empty() && !news.done) {
        // Nothing new: wait to be woken (no suspension since the look).
        co_await wake->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        const auto state = co_await boost::asio::this_coro::cancellation_state;
        if (state.cancelled() != boost::asio::cancellation_type::none)
          throw std::system_error(std::make_error_code(std::errc::operation_canceled));
        continue;
      }
      seen += news.chunks.size();
      if (relay)
        for (const chat_chunk& chunk : news.chunks) co_await context.on_chunk(chunk);
      if (news.done) break;
    }
    auto [response, cost_usd] = call->answer();
    context.saved_usd = cost_usd;
    response.cost_usd = 0;
    if (context.streaming() && !call->streams()) co_await detail::replay_as_chunks(response, context.on_chunk);
    co_return response;
  }

  mutable std::mutex mutex_;
  boost::unordered_flat_map<std::uint64_t, call_pointer> calls_;  // by hash_of(key)
  std::uint64_t coalesced_ = 0;
  std::uint64_t serial_ = 0;
};

}  // namespace llmgate::inline v0
