// The BalancingPolicy concept: which replica of a pool (deployments of one
// model, backend_pool.hpp) takes a request, and four models of it:
//
//   round_robin     each available replica in turn;
//   least_busy      the fewest requests in flight (ties: the next in turn);
//   lowest_latency  the lowest EWMA of time to first token, times the
//                   requests in flight plus one, so that a fast replica is
//                   not piled on (Finagle's "peak EWMA"); a replica never
//                   measured first;
//   weighted        in proportion to the replicas' weights, spread evenly
//                   (nginx's smooth weighted round robin).
//
// prefix_affinity.hpp adds the policy that keeps a prompt's prefix where
// its attention state already is. A policy is called by the pool with its
// lock held, so it keeps state without locks of its own; it sees only what
// the pool tells it (replica_view), never a clock or a socket, so a test
// scripts any situation.
#pragma once

#include <concepts>     // std::same_as
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <limits>       // std::numeric_limits
#include <span>         // std::span
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0 {

/// What a policy knows of one replica when it chooses.
struct replica_view {
  bool available = true;       ///< up (or due a probe) and not already tried for this request
  std::size_t in_flight = 0;   ///< requests it is answering now, from every worker
  std::size_t recent = 0;      ///< of the pool's last placements (replica_pool's window), those it got
  unsigned weight = 1;         ///< its share, as configured (at least 1)
  double ttft_ewma_ms = 0;     ///< EWMA of its time to first token (of the whole answer when not streamed)
  bool measured = false;       ///< whether ttft_ewma_ms holds a sample yet
};

/// What a policy knows of the request.
struct pool_request {
  std::uint64_t prefix = 0;  ///< its prefix's key (prefix_key.hpp); 0: none
};

/// A policy's answer: the replica, and why, in a few words for
/// x-llmgate-backend and the log (a literal: it outlives the call).
struct replica_choice {
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::size_t replica = none;  ///< none: no replica is available
  std::string_view reason = {};
};

/// choose(request, replicas): one of the available replicas, or none when
/// none is available. Called under the pool's lock.
template <class P>
concept BalancingPolicy = requires(P& policy, const pool_request& request, std::span<const replica_view> replicas) {
  { policy.choose(request, replicas) } -> std::same_as<replica_choice>;
};

namespace detail {

// The first available replica at or after `start`, round the ring.
inline std::size_t next_available(std::span<const replica_view> replicas, std::size_t start) {
  for (std::size_t step = 0; step < replicas.size(); ++step) {
    const std::size_t i = (start + step) % replicas.size();
    if (replicas[i].available) return i;
  }
  return replica_choice::none;
}

// The available replica with the lowest cost(view), ties going to the first
// at or after `start`.
template <class Cost>
std::size_t cheapest_available(std::span<const replica_view> replicas, std::size_t start, Cost cost) {
  std::size_t best = replica_choice::none;
  double best_cost = 0;
  for (std::size_t step = 0; step < replicas.size(); ++step) {
    const std::size_t i = (start + step) % replicas.size();
    if (!replicas[i].available) continue;
    const double c = cost(replicas[i]);
    if (best == replica_choice::none || c < best_cost) best = i, best_cost = c;
  }
  return best;
}

}  // namespace detail

class round_robin {
 public:
  replica_choice choose(const pool_request&, std::span<const replica_view> replicas) {
    if (replicas.empty()) return {};
    const std::size_t chosen = detail::next_available(replicas, next_ % replicas.size());
    if (chosen != replica_choice::none) next_ = chosen + 1;
    return {chosen, "round_robin"};
  }

 private:
  std::size_t next_ = 0;
};

class least_busy {
 public:
  replica_choice choose(const pool_request&, std::span<const replica_view> replicas) {
    if (replicas.empty()) return {};
    const std::size_t chosen = detail::cheapest_available(
        replicas, next_ % replicas.size(), [](const replica_view& r) { return static_cast<double>(r.in_flight); });
    if (chosen != replica_choice::none) next_ = chosen + 1;
    return {chosen, "least_busy"};
  }

 private:
  std::size_t next_ = 0;
};

class lowest_latency {
 public:
  replica_choice choose(const pool_request&, std::span<const replica_view> replicas) {
    if (replicas.empty()) return {};
    // A replica never measured costs nothing: each is tried once before
    // the averages decide.
    const std::size_t chosen = detail::cheapest_available(replicas, next_ % replicas.size(), [](const replica_view& r) {
      return r.measured ? r.ttft_ewma_ms * static_cast<double>(r.in_flight + 1) : -1.0;
    });
    if (chosen != replica_choice::none) next_ = chosen + 1;
    return {chosen, "latency"};
  }

 private:
  std::size_t next_ = 0;
};

class weighted {
 public:
  replica_choice choose(const pool_request&, std::span<const replica_view> replicas) {
    current_.resize(replicas.size(), 0);
    // Every available replica gains its weight; the one ahead is chosen and
    // pays the total back, so that weights 5,1,1 give a a b a c a a, not a a a a a b c.
    std::size_t chosen = replica_choice::none;
    std::int64_t total = 0;
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      if (!replicas[i].available) continue;
      current_[i] += replicas[i].weight;
      total += replicas[i].weight;
      if (chosen == replica_choice::none || current_[i] > current_[chosen]) chosen = i;
    }
    if (chosen != replica_choice::none) current_[chosen] -= total;
    return {chosen, "weighted"};
  }

 private:
  std::vector<std::int64_t> current_;
};

static_assert(BalancingPolicy<round_robin>);
static_assert(BalancingPolicy<least_busy>);
static_assert(BalancingPolicy<lowest_latency>);
static_assert(BalancingPolicy<weighted>);

}  // namespace llmgate::inline v0
