// circuit_breaker_backend: stops sending to a backend that keeps failing,
// and probes it later.
//
//   closed     calls pass; `failure_threshold` failures in a row open it.
//   open       calls fail at once with errc::circuit_open (retryable, with
//              the rest of the rest as retry_after), so a fallback list moves
//              to its next backend without waiting for a dead one.
//   half-open  after `open_for`, one call goes through as a probe while the
//              others still fail fast; its success closes the circuit, its
//              failure opens it again.
//
// Failures that count: the backend's availability, not the caller's input:
// retryable errors (429, 5xx, lost connections, timeouts) and malformed
// answers; a client's mistake (backend_error::client_error(): a 400, a
// prompt over the context, even in a stream) does not count, nor resets the count.
// Copies share one circuit. Typical stacking:
// fallback_backend<any_backend>{circuit_breaker_backend{retrying_backend{adapter}}, ...}.
#pragma once

#include <chrono>       // std::chrono::steady_clock, milliseconds
#include <memory>       // std::shared_ptr, std::make_shared
#include <mutex>        // std::mutex, std::lock_guard
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include <boost/asio/awaitable.hpp>  // net::awaitable

#include "llmgate/backend/backend.hpp"
#include "llmgate/backend/backend_error.hpp"

namespace llmgate::inline v0 {

namespace net = boost::asio;

struct circuit_breaker_options {
  unsigned failure_threshold = 5;          ///< failures in a row that open the circuit
  std::chrono::milliseconds open_for{30'000};  ///< rest before a probe
};

enum class circuit_state { closed, open, half_open };

template <Backend B>
class circuit_breaker_backend {
 public:
  explicit circuit_breaker_backend(B backend, circuit_breaker_options options = {})
      : backend_(std::move(backend)), circuit_(std::make_shared<circuit>(options)) {}

  std::string_view name() const { return backend_.name(); }

  circuit_state state() const {
    std::lock_guard lock(circuit_->mutex);
    return circuit_->state;
  }

  net::awaitable<chat_response> complete(const chat_request& request) {
    co_return co_await guarded([&] { return backend_.complete(request); });
  }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    co_return co_await guarded([&] { return backend_.stream(request, on_chunk); });
  }

  net::awaitable<embedding_response> embed(const embedding_request& request)
    requires EmbeddingBackend<B>
  {
    co_return co_await guarded([&] { return backend_.embed(request); });
  }

 private:
  using clock = std::chrono::steady_clock;

  struct circuit {
    explicit circuit(circuit_breaker_options o) : options(o) {}
    circuit_breaker_options options;
    std::mutex mutex;
    circuit_state state = circuit_state::closed;
    unsigned failures = 0;          ///< in a row, while closed
    clock::time_point open_until;
    bool probing = false;           ///< a half-open probe is in flight
  };

  template <class Call>
  auto guarded(Call call) -> decltype(call()) {
    admit();
    try {
      auto result = co_await call();
      record(true);
      co_return result;
    } catch (const backend_error& failure) {
      if (!failure.client_error() && (failure.retryable() || failure.status() == 0)) record(false);
      else record_neutral();
      throw;
    }
  }

  // Lets the call through, or throws circuit_open.
  void admit() {
    std::lock_guard lock(circuit_->mutex);
    auto& c = *circuit_;
    const auto now = clock::now();
    if (c.state == circuit_state::open && now >= c.open_until) c.state = circuit_state::half_open;
    if (c.state == circuit_state::closed) return;
    if (c.state == circuit_state::half_open && !c.probing) {
      c.probing = true;
      return;
    }
    const auto rest = std::chrono::duration_cast<std::chrono::milliseconds>(
        c.state == circuit_state::open ? c.open_until - now : c.options.open_for);
    throw backend_error(errc::circuit_open,
                        std::string(backend_.name()) + ": circuit open after repeated failures",
                        {.backend = std::string(backend_.name()), .retryable = true, .retry_after = rest});
  }

  void record(bool success) {
    std::lock_guard lock(circuit_->mutex);
    auto& c = *circuit_;
    const bool probe = c.state == circuit_state::half_open;
    c.probing = false;
    if (success) {
      c.state = circuit_state::closed;
      c.failures = 0;
    } else if (probe || ++c.failures >= c.options.failure_threshold) {
      c.state = circuit_state::open;
      c.open_until = clock::now() + c.options.open_for;
      c.failures = 0;
    }
  }

  // A failure that says nothing about the backend's health ends a probe
  // without deciding it: the next call probes again.
  void record_neutral() {
    std::lock_guard lock(circuit_->mutex);
    circuit_->probing = false;
  }

  B backend_;
  std::shared_ptr<circuit> circuit_;
};

}  // namespace llmgate::inline v0
