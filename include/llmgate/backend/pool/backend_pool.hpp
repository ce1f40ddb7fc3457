// backend_pool: several deployments of one model (replicas: the same model
// server at several addresses) behind one Backend. Each request goes to the
// replica its BalancingPolicy chooses; when that replica fails for its
// availability before a streamed chunk reached the caller, the request is
// placed again among the replicas it has not tried, as fallback_backend
// does across backends. After the first chunk nothing moves: the caller
// has seen that answer begin. A request the upstream refused as the
// client's mistake goes up at once: every replica would refuse it.
//
// The answer's `backend` is "<replica>; <why>", e.g. "llama#1; prefix
// held", which the gateway sends as x-llmgate-backend and logs; /metrics
// counts by the replica alone.
//
// Each worker has its own pool of backends (its own connections); the
// replica_pool, with the loads, the health and the policy, is shared.
// A pool is itself a Backend, so a fallback list may hold several pools.
#pragma once

#include <cstddef>      // std::size_t
#include <exception>    // std::exception_ptr, std::current_exception, std::rethrow_exception
#include <memory>       // std::shared_ptr
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>  // net::awaitable

#include "llmgate/backend/backend.hpp"               // Backend, EmbeddingBackend
#include "llmgate/backend/backend_error.hpp"         // backend_error
#include "llmgate/backend/pool/balancing_policy.hpp" // BalancingPolicy, pool_request
#include "llmgate/backend/pool/prefix_key.hpp"       // prefix_key, default_prefix_budget_bytes
#include "llmgate/backend/pool/replica_pool.hpp"     // replica_pool
#include "llmgate/error.hpp"                         // llmgate::error

namespace llmgate::inline v0 {

namespace net = boost::asio;

namespace detail {

// What circuit_breaker.hpp counts against a backend: its availability.
inline bool says_replica_is_unwell(const backend_error& failure) noexcept {
  return !failure.client_error() && (failure.retryable() || failure.status() == 0);
}

}  // namespace detail

template <Backend B, BalancingPolicy Policy, class Clock = std::chrono::steady_clock>
class backend_pool {
 public:
  using shared_state = replica_pool<Policy, Clock>;

  /// `replicas[i]` is `state`'s replica i. Throws llmgate::error when
  /// their counts differ or there is none.
  backend_pool(std::string name, std::vector<B> replicas, std::shared_ptr<shared_state> state,
               std::size_t prefix_budget_bytes = default_prefix_budget_bytes)
      : name_(std::move(name)), replicas_(std::move(replicas)), state_(std::move(state)),
        prefix_budget_bytes_(prefix_budget_bytes) {
    if (!state_ || replicas_.empty() || state_->size() != replicas_.size())
      throw error(errc::invalid_request, "pool \"" + name_ + "\": one backend per replica is needed");
  }

  std::string_view name() const noexcept { return name_; }
  const std::shared_ptr<shared_state>& state() const noexcept { return state_; }

  net::awaitable<chat_response> complete(const chat_request& request) {
    const pool_request placed{.prefix = prefix_key(request, prefix_budget_bytes_)};
    std::vector<bool> tried(replicas_.size(), false);
    std::exception_ptr last;
    for (;;) {
      auto lease = state_->place(placed, tried);
      if (!lease) break;
      tried[lease.replica()] = true;
      try {
        chat_response response = co_await replicas_[lease.replica()].complete(request);
        lease.succeeded(response.usage);
        response.backend = label(lease);
        co_return response;
      } catch (const backend_error& failure) {
        lease.failed(detail::says_replica_is_unwell(failure));
        if (failure.client_error()) throw;
        last = std::current_exception();
      }
    }
    if (last) std::rethrow_exception(last);
    throw none_available();
  }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    const pool_request placed{.prefix = prefix_key(request, prefix_budget_bytes_)};
    std::vector<bool> tried(replicas_.size(), false);
    std::exception_ptr last;
    bool delivered = false;
    for (;;) {
      auto lease = state_->place(placed, tried);
      if (!lease) break;
      tried[lease.replica()] = true;
      auto* held = &lease;
      chunk_handler noting = [&delivered, held, &on_chunk](const chat_chunk& chunk) -> net::awaitable<void> {
        // The first token, not the first byte: servers send the role's
        // empty chunk before they read the prompt.
        if (!chunk.content_delta.empty() || !chunk.tool_call_deltas_json.empty() || chunk.finish_reason)
          held->first_token();
        delivered = true;
        co_await on_chunk(chunk);
      };
      try {
        chat_response response = co_await replicas_[lease.replica()].stream(request, noting);
        lease.succeeded(response.usage);
        response.backend = label(lease);
        co_return response;
      } catch (const backend_error& failure) {
        lease.failed(detail::says_replica_is_unwell(failure));
        if (delivered || failure.client_error()) throw;
        last = std::current_exception();
      }
    }
    if (last) std::rethrow_exception(last);
    throw none_available();
  }

  /// Embeddings are placed as a request without a prefix.
  net::awaitable<embedding_response> embed(const embedding_request& request)
    requires EmbeddingBackend<B>
  {
    std::vector<bool> tried(replicas_.size(), false);
    std::exception_ptr last;
    for (;;) {
      auto lease = state_->place({}, tried);
      if (!lease) break;
      tried[lease.replica()] = true;
      try {
        embedding_response response = co_await replicas_[lease.replica()].embed(request);
        lease.succeeded({});
        co_return response;
      } catch (const backend_error& failure) {
        lease.failed(detail::says_replica_is_unwell(failure));
        if (failure.client_error()) throw;
        last = std::current_exception();
      }
    }
    if (last) std::rethrow_exception(last);
    throw none_available();
  }

 private:
  std::string label(const typename shared_state::lease& lease) const {
    return state_->name(lease.replica()) + "; " + std::string(lease.reason());
  }

  backend_error none_available() const {
    return backend_error(errc::upstream_unreachable,
                         "every replica of " + name_ + " is resting after failures; none can take the request",
                         {.backend = name_, .status = 503, .retryable = true});
  }

  std::string name_;
  std::vector<B> replicas_;
  std::shared_ptr<shared_state> state_;
  std::size_t prefix_budget_bytes_;
};

}  // namespace llmgate::inline v0
