// replica_pool: what every worker's backend_pool of one pool shares: each
// replica's load (requests in flight, and its share of the pool's recent
// placements), its time to first token, its tokens, its health, and the
// balancing policy, behind one mutex. Thread-safe.
//
// Health is passive, as a circuit breaker's: a replica whose call failed
// for its availability (a retryable error, a lost connection, a timeout, a
// malformed answer; not the caller's own mistake) rests, 1 s after its
// first failure in a row and twice as long after each next one, up to 30 s,
// and gets nothing meanwhile; then one request probes it, and only its
// success lets the others back in.
#pragma once

#include <algorithm>    // std::min
#include <chrono>       // std::chrono::steady_clock, milliseconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <mutex>        // std::mutex, std::scoped_lock
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::exchange
#include <vector>       // std::vector

#include "llmgate/backend/pool/balancing_policy.hpp"  // BalancingPolicy, replica_view, replica_choice
#include "llmgate/chat/chat.hpp"                      // token_usage
#include "llmgate/error.hpp"                          // llmgate::error

namespace llmgate::inline v0 {

struct replica_spec {
  std::string name;  ///< how headers, logs and /metrics call it
  unsigned weight = 1;
};

struct replica_pool_options {
  std::chrono::milliseconds first_rest{1'000};     ///< a replica's rest after its first failure in a row
  std::chrono::milliseconds longest_rest{30'000};  ///< the rest's bound as it doubles
  /// Placements per replica that replica_view::recent counts over (the
  /// pool's last size() x this many); 0: recent is always 0.
  std::size_t recent_per_replica = 8;
};

/// What /metrics and /admin/stats tell of one replica.
struct replica_report {
  std::string name;
  unsigned weight = 1;
  bool up = true;               ///< not resting after a failure
  std::size_t in_flight = 0;
  std::uint64_t requests = 0;   ///< placed on it, probes included
  std::uint64_t failures = 0;   ///< for its availability
  std::uint64_t prompt_tokens = 0;
  std::uint64_t reused_tokens = 0;  ///< prompt tokens it did not compute (usage's cached tokens)
  double ttft_ewma_ms = 0;
};

template <BalancingPolicy Policy, class Clock = std::chrono::steady_clock>
class replica_pool {
 public:
  /// Throws llmgate::error(errc::invalid_request) when `replicas` is empty.
  explicit replica_pool(std::vector<replica_spec> replicas, Policy policy = {}, replica_pool_options options = {},
                        Clock clock = {})
      : policy_(std::move(policy)), options_(options), clock_(std::move(clock)) {
    if (replicas.empty()) throw error(errc::invalid_request, "a pool needs a replica");
    for (auto& spec : replicas) {
      replica r;
      r.name = std::move(spec.name);
      r.view.weight = std::max(1u, spec.weight);
      replicas_.push_back(std::move(r));
    }
  }

  std::size_t size() const noexcept { return replicas_.size(); }
  const std::string& name(std::size_t replica) const { return replicas_.at(replica).name; }

  /// One request's hold on the replica it was placed on; say how it went
  /// (first_token, then succeeded or failed). One dropped unsaid (its call
  /// was cancelled) only leaves the replica's load.
  class lease {
   public:
    lease() = default;
    lease(lease&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)), choice_(other.choice_), started_(other.started_),
          timed_(other.timed_) {}
    lease& operator=(lease&&) = delete;
    ~lease() {
      if (pool_) pool_->end(choice_.replica, outcome::abandoned, {});
    }

    explicit operator bool() const noexcept { return pool_ != nullptr; }
    std::size_t replica() const noexcept { return choice_.replica; }
    std::string_view reason() const noexcept { return choice_.reason; }

    /// The replica's first token arrived (for a whole answer: the answer).
    void first_token() {
      if (!pool_ || std::exchange(timed_, true)) return;
      pool_->time_first_token(choice_.replica, pool_->clock_.now() - started_);
    }
    void succeeded(const token_usage& usage) {
      first_token();
      std::exchange(pool_, nullptr)->end(choice_.replica, outcome::succeeded, usage);
    }
    /// `availability`: whether the failure says the replica is unwell
    /// (circuit_breaker.hpp's rule), not the request.
    void failed(bool availability) {
      std::exchange(pool_, nullptr)->end(choice_.replica, availability ? outcome::unwell : outcome::refused, {});
    }

   private:
    friend class replica_pool;
    lease(replica_pool* pool, replica_choice choice, typename Clock::time_point started)
        : pool_(pool), choice_(choice), started_(started) {}
    replica_pool* pool_ = nullptr;
    replica_choice choice_;
    typename Clock::time_point started_{};
    bool timed_ = false;
  };

  /// The policy's choice among the replicas that are up (or due a probe)
  /// and not in `tried` (by position), counted in flight there; an empty
  /// lease when there is none.
  lease place(const pool_request& request, const std::vector<bool>& tried) {
    std::scoped_lock lock(mutex_);
    const auto now = clock_.now();
    views_.clear();
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
      auto view = replicas_[i].view;
      view.available = (i >= tried.size() || !tried[i]) && placeable(replicas_[i], now);
      views_.push_back(view);
    }
    const replica_choice choice = policy_.choose(request, views_);
    if (choice.replica >= replicas_.size()) return {};
    auto& r = replicas_[choice.replica];
    if (r.failures_in_row > 0) r.probing = true;
    ++r.view.in_flight;
    ++r.requests;
    remember_placement(choice.replica);
    return lease(this, choice, now);
  }

  std::vector<replica_report> reports() const {
    std::scoped_lock lock(mutex_);
    const auto now = clock_.now();
    std::vector<replica_report> all;
    for (const auto& r : replicas_)
      all.push_back({.name = r.name, .weight = r.view.weight, .up = r.failures_in_row == 0 || now >= r.rest_until,
                     .in_flight = r.view.in_flight, .requests = r.requests, .failures = r.failures,
                     .prompt_tokens = r.prompt_tokens, .reused_tokens = r.reused_tokens,
                     .ttft_ewma_ms = r.view.ttft_ewma_ms});
    return all;
  }

 private:
  enum class outcome { succeeded, unwell, refused, abandoned };

  struct replica {
    std::string name;
    replica_view view;  // in_flight, weight, ttft; `available` is worked out per placement
    std::uint64_t requests = 0, failures = 0, prompt_tokens = 0, reused_tokens = 0;
    unsigned failures_in_row = 0;
    typename Clock::time_point rest_until{};
    bool probing = false;  // one request is finding out whether it is back
  };

  static bool placeable(const replica& r, typename Clock::time_point now) {
    return r.failures_in_row == 0 || (now >= r.rest_until && !r.probing);
  }

  // The window of recent placements: a ring of replica positions.
  void remember_placement(std::size_t i) {
    const std::size_t window = options_.recent_per_replica * replicas_.size();
    if (window == 0) return;
    if (recent_.size() < window) {
      recent_.push_back(i);
    } else {
      --replicas_[recent_[next_recent_]].view.recent;
      recent_[next_recent_] = i;
      next_recent_ = (next_recent_ + 1) % window;
    }
    ++replicas_[i].view.recent;
  }

  void time_first_token(std::size_t i, typename Clock::duration waited) {
    // The EWMA's weight of a new sample: about the last five calls count.
    constexpr double alpha = 0.2;
    const double ms = std::chrono::duration<double, std::milli>(waited).count();
    std::scoped_lock lock(mutex_);
    auto& view = replicas_[i].view;
    view.ttft_ewma_ms = view.measured ? (1 - alpha) * view.ttft_ewma_ms + alpha * ms : ms;
    view.measured = true;
  }

  void end(std::size_t i, outcome how, const token_usage& usage) {
    std::scoped_lock lock(mutex_);
    auto& r = replicas_[i];
    --r.view.in_flight;
    switch (how) {
      case outcome::succeeded:
        r.failures_in_row = 0;
        r.probing = false;
        r.prompt_tokens += usage.prompt_tokens;
        r.reused_tokens += usage.cached_prompt_tokens;
        break;
      case outcome::unwell: {
        ++r.failures;
        ++r.failures_in_row;
        r.probing = false;
        auto rest = options_.first_rest;
        for (unsigned n = 1; n < r.failures_in_row && rest < options_.longest_rest; ++n) rest *= 2;
        r.rest_until = clock_.now() + std::min(rest, options_.longest_rest);
        break;
      }
      case outcome::refused:  // the request's fault: says nothing of the replica
      case outcome::abandoned:
        r.probing = false;
        break;
    }
  }

  mutable std::mutex mutex_;
  Policy policy_;
  replica_pool_options options_;
  Clock clock_;
  std::vector<replica> replicas_;
  std::vector<replica_view> views_;  // scratch for place(), under the mutex
  std::vector<std::size_t> recent_;  // the last placements, a ring once full
  std::size_t next_recent_ = 0;      // the oldest of them, once full
};

}  // namespace llmgate::inline v0
