// retrying_backend: tries a backend again when it fails in a way that
// waiting may cure: 429 rate_limit_exceeded, 408, 409, 5xx, lost
// connections and timeouts (backend_error::retryable()). Never
// insufficient_quota or other 4xx input errors, and never once a stream has
// delivered its first chunk: the caller has seen output, and a second
// answer would not continue the first.
//
// Waits: what the server asked for (retry-after-ms, Retry-After, rate-limit
// reset headers) exactly, or else exponential backoff with jitter: try n
// waits initial_backoff x multiplier^(n-1), capped at max_backoff, times a
// random factor in [1 - jitter, 1] so that many clients do not retry in step.
// A server asking for more than max_retry_after is not waited for: the
// error goes up at once, where a fallback may answer sooner.
#pragma once

#include <algorithm>    // std::min
#include <chrono>       // std::chrono::milliseconds
#include <cmath>        // std::pow
#include <optional>     // std::optional
#include <random>       // std::mt19937, std::uniform_real_distribution
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include <boost/asio/awaitable.hpp>      // net::awaitable
#include <boost/asio/steady_timer.hpp>   // the wait between tries
#include <boost/asio/this_coro.hpp>      // net::this_coro::executor
#include <boost/asio/use_awaitable.hpp>  // net::use_awaitable

#include "llmgate/backend/backend.hpp"
#include "llmgate/backend/backend_error.hpp"

namespace llmgate::inline v0 {

namespace net = boost::asio;

struct retry_policy {
  unsigned max_attempts = 3;  ///< tries in all, the first included
  std::chrono::milliseconds initial_backoff{500};
  double multiplier = 2.0;
  std::chrono::milliseconds max_backoff{20'000};
  double jitter = 0.5;  ///< 0: exact backoff; 1: anywhere between 0 and the backoff
  std::chrono::milliseconds max_retry_after{60'000};

  /// How long to wait before retry number `retry` (1 for the first) after
  /// `failure`, with `random` uniform in [0, 1); nullopt: do not retry.
  std::optional<std::chrono::milliseconds> delay(unsigned retry, const backend_error& failure,
                                                 double random) const {
    if (!failure.retryable() || failure.client_error() || retry >= max_attempts) return std::nullopt;
    if (const auto asked = failure.retry_after()) {
      if (*asked > max_retry_after) return std::nullopt;
      return *asked;
    }
    const double backoff = std::min(static_cast<double>(max_backoff.count()),
                                    static_cast<double>(initial_backoff.count()) *
                                        std::pow(multiplier, static_cast<double>(retry - 1)));
    return std::chrono::milliseconds(static_cast<long long>(backoff * (1.0 - jitter * random)));
  }
};

template <Backend B>
class retrying_backend {
 public:
  explicit retrying_backend(B backend, retry_policy policy = {})
      : backend_(std::move(backend)), policy_(policy) {}

  std::string_view name() const { return backend_.name(); }
  B& inner() noexcept { return backend_; }

  net::awaitable<chat_response> complete(const chat_request& request) {
    co_return co_await with_retries([&] { return backend_.complete(request); }, nullptr);
  }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    bool delivered = false;
    chunk_handler noting = [&](const chat_chunk& chunk) -> net::awaitable<void> {
      delivered = true;
      co_await on_chunk(chunk);
    };
    co_return co_await with_retries([&] { return backend_.stream(request, noting); }, &delivered);
  }

  net::awaitable<embedding_response> embed(const embedding_request& request)
    requires EmbeddingBackend<B>
  {
    co_return co_await with_retries([&] { return backend_.embed(request); }, nullptr);
  }

 private:
  template <class Call>
  auto with_retries(Call call, const bool* delivered) -> decltype(call()) {
    for (unsigned retry = 1;; ++retry) {
      std::optional<std::chrono::milliseconds> wait;
      try {
        co_return co_await call();
      } catch (const backend_error& failure) {
        if (delivered && *delivered) throw;
        wait = policy_.delay(retry, failure, random());
        if (!wait) throw;
      }
      net::steady_timer timer(co_await net::this_coro::executor, *wait);
      co_await timer.async_wait(net::use_awaitable);
    }
  }

  static double random() {
    thread_local std::mt19937 generator{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(generator);
  }

  B backend_;
  retry_policy policy_;
};

}  // namespace llmgate::inline v0
