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

#include <algorithm>     // std::find_if
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

// What the requests waiting for a call share with the request making it;
// thread-safe.
class coalesced_call {
 public:
  // Wakes a waiter, on the waiter's executor, by cancelling its wait.
  using wake_timer = boost::asio::steady_timer;

  // What a waiter has not seen yet: the chunks after the first `seen`.
  struct news {
    std::vector<chat_chunk> chunks;
    bool done = false;
  };

  explicit coalesced_call(bool streams) : streams_(streams) {}

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
  using call_pointer = std::shared_ptr<detail::coalesced_call>;
  using wake_pointer = std::shared_ptr<detail::coalesced_call::wake_timer>;

 public:
  struct statistics {
    std::size_t calls = 0;        ///< calls in flight that others may join
    std::size_t waiting = 0;      ///< requests waiting for them (not those making them)
    std::uint64_t coalesced = 0;  ///< requests answered by another's call, since the start
  };

  class ticket;

  coalesced_calls() = default;
  coalesced_calls(const coalesced_calls&) = delete;
  coalesced_calls& operator=(const coalesced_calls&) = delete;

  statistics stats() const {
    std::lock_guard lock(mutex_);
    statistics s{.calls = calls_.size(), .coalesced = coalesced_};
    for (const auto& [hash, call] : calls_)
      if (call.shared) s.waiting += call.shared->waiting();
    return s;
  }

 private:
  static std::uint64_t hash_of(const exact_key& key) noexcept { return key.hash.low ^ key.hash.high; }

  // A call in the table: whose key, which call of that key, and what its
  // waiters share with its caller: made by the first of them, so that a
  // call no one joins costs no allocation, or at once where the caller
  // streams (its chunks are kept from the start for those who join midway).
  struct entry {
    const exact_key* key;  // the caller's, which outlives the entry
    std::uint64_t serial;
    call_pointer shared;
  };

  // Takes the call of `hash` and `serial` out of the table (or of the
  // closed ones): later requests make a call of their own. Returns what
  // its waiters share, null where none came.
  call_pointer forget(std::uint64_t hash, std::uint64_t serial) {
    std::lock_guard lock(mutex_);
    if (const auto at = calls_.find(hash); at != calls_.end() && at->second.serial == serial) {
      call_pointer shared = std::move(at->second.shared);
      calls_.erase(at);
      return shared;
    }
    const auto closed = std::find_if(closed_.begin(), closed_.end(), [&](const auto& c) { return c.first == serial; });
    if (closed == closed_.end()) return nullptr;
    call_pointer shared = std::move(closed->second);
    closed_.erase(closed);
    return shared;
  }

  // Whether a cancellation of the caller making the call of `hash` and
  // `serial` goes through now: not while others wait for it (the call is
  // then closed: taken out of the table, so that no one else joins a call
  // whose caller has gone); always once the call has ended.
  bool cancel_through(std::uint64_t hash, std::uint64_t serial) {
    std::lock_guard lock(mutex_);  // no one joins between the count and the erase
    const auto at = calls_.find(hash);
    if (at == calls_.end() || at->second.serial != serial) return true;
    call_pointer shared = std::move(at->second.shared);
    calls_.erase(at);
    if (!shared || shared->waiting() == 0) return true;
    closed_.emplace_back(serial, std::move(shared));
    return false;
  }

  mutable std::mutex mutex_;
  boost::unordered_flat_map<std::uint64_t, entry> calls_;  // by hash_of(key)
  std::vector<std::pair<std::uint64_t, call_pointer>> closed_;  // by serial, until their callers end them
  std::uint64_t coalesced_ = 0;
  std::uint64_t serial_ = 0;  // of the last call entered; 0 for none
};

/// A request's part in its key's call: it makes the call, or waits for
/// another request's. It lives in the frame of the coroutine that awaits
/// answer(), which tells it how the answer came (answered() or failed()),
/// so that the request making the call costs no coroutine frame of its
/// own.
class coalesced_calls::ticket {
 public:
  /// The part of the request whose exact-cache key is `key` (which must
  /// outlive the ticket) among identical misses, asked on `executor`, the
  /// request's: it makes the call when no identical request is being
  /// answered, else it waits for that one's (context.cache is then
  /// coalesced). With no table (`calls` null), answer() just asks next.
  ticket(coalesced_calls* calls, const exact_key& key, request_context& context,
         const boost::asio::any_io_executor& executor);
  ticket(const ticket&) = delete;
  ticket& operator=(const ticket&) = delete;
  ~ticket() {
    if (wake_) {
      call_->remove_waiter(wake_);
    } else if (makes_call()) {  // the request's coroutine destroyed before its answer came
      if (const call_pointer shared = end())
        shared->fail(std::make_exception_ptr(std::runtime_error("the request making the call ended without an answer")));
    }
  }

  bool makes_call() const noexcept { return calls_ && !wake_; }

  /// The filter to install (this_coro::reset_cancellation_state) before
  /// answer() where makes_call(): a cancellation is held back while others
  /// wait (cancel_through). It stays with the coroutine after the call:
  /// once the call is gone it lets a terminal cancellation through, as the
  /// default does. A named type of numbers and a pointer, not a closure:
  /// GCC 12 destroys some co_await temporaries twice (upstream.hpp).
  struct hold_back_cancellation {
    coalesced_calls* calls;
    std::uint64_t hash, serial;
    boost::asio::cancellation_type operator()(boost::asio::cancellation_type wanted) const {
      wanted &= boost::asio::cancellation_type::terminal;
      return wanted == boost::asio::cancellation_type::none || calls->cancel_through(hash, serial)
                 ? wanted
                 : boost::asio::cancellation_type::none;
    }
  };
  hold_back_cancellation cancellation_filter() const noexcept { return {calls_, hash_, serial_}; }

  /// The answer: next's (whose stream goes to the waiters too where this
  /// request makes the call), or the call's this request waits for. Not
  /// a coroutine: the request making the call awaits next's frame alone.
  template <class Next>
  boost::asio::awaitable<chat_response> answer(chat_request& request, request_context& context, Next& next) {
    if (wake_) return wait(context);
    if (call_ && context.on_chunk) {
      // The caller's own client going away ends the stream only when no
      // one else waits.
      own_client_ = std::move(context.on_chunk);
      context.on_chunk = [this](const chat_chunk& chunk) -> boost::asio::awaitable<void> {
        call_->publish(chunk);
        if (own_client_failure_) co_return;
        try {
          co_await own_client_(chunk);
        } catch (...) {
          if (call_->waiting() == 0) throw;
          own_client_failure_ = std::current_exception();
        }
      };
    }
    return next(request, context);
  }

  /// Where answer() returned `response`: the waiters get it. Throws the
  /// caller's own client's failure, which the waiters did not share.
  void answered(const chat_response& response, request_context& context) {
    if (!makes_call()) return;
    if (const call_pointer shared = end())
      shared->finish(response, context.cache == cache_outcome::miss ? response.cost_usd : context.saved_usd);
    if (own_client_) context.on_chunk = std::move(own_client_);
    if (own_client_failure_) std::rethrow_exception(own_client_failure_);
  }
  /// Where answer() threw `failure`: the waiters throw it too.
  void failed(std::exception_ptr failure, request_context& context) {
    if (!makes_call()) return;
    if (const call_pointer shared = end()) shared->fail(std::move(failure));
    if (own_client_) context.on_chunk = std::move(own_client_);
  }

 private:
  // The caller's end of the call: out of the table, and no longer this
  // ticket's. Returns what its waiters share, null where none came; the
  // caller then tells them how the call ended.
  call_pointer end() {
    call_pointer shared = serial_ != 0 ? calls_->forget(hash_, serial_) : nullptr;
    calls_ = nullptr;
    if (!shared) shared = std::move(call_);
    call_ = nullptr;
    return shared;
  }

  // Streams the call's chunks to a waiting request as they come (when both
  // stream), then returns the call's answer as this request's.
  boost::asio::awaitable<chat_response> wait(request_context& context) {
    const bool relay = context.streaming() && call_->streams();
    std::size_t seen = 0;
    for (;;) {
      detail::coalesced_call::news news = call_->since(seen);
      if (news.chunks.empty() && !news.done) {
        // Nothing new: wait to be woken (no suspension since the look).
        co_await wake_->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
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
    auto [response, cost_usd] = call_->answer();
    context.saved_usd = cost_usd;
    response.cost_usd = 0;
    if (context.streaming() && !call_->streams()) co_await detail::replay_as_chunks(response, context.on_chunk);
    co_return response;
  }

  coalesced_calls* calls_ = nullptr;  // null: no table, or the caller's call ended
  std::uint64_t hash_ = 0, serial_ = 0;  // the caller's entry; serial 0: none (the call is made alone)
  call_pointer call_;  // what a waiter waits on; a streaming caller's shared stream
  wake_pointer wake_;  // a waiter's: what wakes it; null for the caller
  chunk_handler own_client_;  // the caller's client's stream, while the waiters share it
  std::exception_ptr own_client_failure_;  // while the waiters still stream
};

// The call of this key to wait for, with the timer that wakes the waiter
// on `executor`; or a new call for the caller to make, entered in the
// table unless another key's call holds its hash (a collision of 64 bits:
// that request then makes its call alone).
inline coalesced_calls::ticket::ticket(coalesced_calls* calls, const exact_key& key, request_context& context,
                                       const boost::asio::any_io_executor& executor)
    : calls_(calls), hash_(calls ? hash_of(key) : 0) {
  if (!calls) return;
  std::lock_guard lock(calls->mutex_);
  const auto [at, entered] = calls->calls_.try_emplace(hash_, entry{&key, calls->serial_ + 1, nullptr});
  entry& call = at->second;
  if (entered) {
    serial_ = ++calls->serial_;
    if (context.streaming()) call_ = call.shared = std::make_shared<detail::coalesced_call>(/*streams=*/true);
    return;
  }
  if (call.key->scope != key.scope || call.key->tenant != key.tenant || call.key->text != key.text) return;
  if (!call.shared) call.shared = std::make_shared<detail::coalesced_call>(/*streams=*/false);
  call_ = call.shared;
  wake_ = std::make_shared<detail::coalesced_call::wake_timer>(executor,
                                                               detail::coalesced_call::wake_timer::time_point::max());
  call_->add_waiter(wake_, context.streaming());
  ++calls->coalesced_;
  // Before the first chunk, whose headers say so.
  context.cache = cache_outcome::coalesced;
  context.similarity = 1;
}

}  // namespace llmgate::inline v0
