// prefix_affinity: a BalancingPolicy that sends a request to the replica
// that most recently served its prefix, where that prefix's attention (KV)
// state already is, unless that replica is over its share of the load:
// consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam,
// 2018). A replica's load is its requests in flight plus its share of the
// pool's recent placements, so that the bound holds for a stream of short
// requests as well as for a crowd of long ones; its bound is
// ceil((1 + epsilon) x the pool's load, this request included, x its share
// of the weights). A prefix whose replica is over it moves, and stays where
// it moved, so that a hot prefix spreads over as many replicas as its load
// needs and no more: to the replica within its bound with the fewest
// requests in flight, the first of the prefix's own rendezvous order
// (weighted highest random weight) among equals.
//
// A prefix never seen is placed the same way: on an idle pool every worker,
// and a restarted gateway, sends it to the same replica. A request without
// a prefix goes to the least busy replica.
//
// The prefixes remembered are bounded: two generations of at most
// remembered_prefixes / 2 each; a prefix found in the older one is moved to
// the newer, and the older is dropped when the newer fills, so what is
// forgotten is what was not used for the longest.
#pragma once

#include <cmath>        // std::ceil, std::log
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <optional>     // std::optional
#include <span>         // std::span
#include <utility>      // std::move

#include <boost/unordered/unordered_flat_map.hpp>  // prefix -> replica

#include "llmgate/backend/pool/balancing_policy.hpp"  // BalancingPolicy, replica_view, least_busy

namespace llmgate::inline v0 {

struct prefix_affinity_options {
  double epsilon = 0.25;                     ///< how far over the mean load a replica keeps its prefixes
  std::size_t remembered_prefixes = 65'536;  ///< prefixes whose replica is remembered
};

class prefix_affinity {
 public:
  explicit prefix_affinity(prefix_affinity_options options = {}) : options_(options) {}

  replica_choice choose(const pool_request& request, std::span<const replica_view> replicas) {
    if (request.prefix == 0) return spread_.choose(request, replicas);
    std::size_t load = 1;  // the request being placed
    double weights = 0;
    for (const auto& r : replicas)
      if (r.available) load += r.in_flight + r.recent, weights += r.weight;
    if (weights == 0) return {};
    const auto within_bound = [&](std::size_t i) {
      const double bound = std::ceil((1 + options_.epsilon) * static_cast<double>(load) * replicas[i].weight / weights);
      return static_cast<double>(replicas[i].in_flight + replicas[i].recent + 1) <= bound;
    };
    const std::optional<std::size_t> held = remembered(request.prefix);
    if (held && *held < replicas.size() && replicas[*held].available && within_bound(*held))
      return {*held, "prefix held"};
    std::size_t chosen = replica_choice::none;
    double best = 0;
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      if (!replicas[i].available || !within_bound(i)) continue;
      const double score = rendezvous_score(request.prefix, i, replicas[i].weight);
      const bool idler = chosen != replica_choice::none && replicas[i].in_flight < replicas[chosen].in_flight;
      const bool as_idle = chosen != replica_choice::none && replicas[i].in_flight == replicas[chosen].in_flight;
      if (chosen == replica_choice::none || idler || (as_idle && score > best)) chosen = i, best = score;
    }
    // Some replica is always within its bound for epsilon >= 0; a fallback all the same.
    if (chosen == replica_choice::none) return spread_.choose(request, replicas);
    remember(request.prefix, chosen);
    if (!held) return {chosen, "prefix new"};
    if (*held >= replicas.size() || !replicas[*held].available)
      return {chosen, "prefix moved: its replica is unavailable"};
    return {chosen, "prefix moved: its replica is over the load bound"};
  }

  /// The replica remembered for `prefix`, if any.
  std::optional<std::size_t> remembered(std::uint64_t prefix) {
    if (const auto found = newer_.find(prefix); found != newer_.end()) return found->second;
    if (const auto found = older_.find(prefix); found != older_.end()) {
      const std::size_t replica = found->second;
      older_.erase(found);
      remember(prefix, replica);
      return replica;
    }
    return std::nullopt;
  }

 private:
  void remember(std::uint64_t prefix, std::size_t replica) {
    if (newer_.size() >= options_.remembered_prefixes / 2 + 1 && !newer_.contains(prefix)) {
      older_ = std::move(newer_);
      newer_.clear();
    }
    newer_[prefix] = replica;
  }

  // Weighted highest random weight: w / -ln(u), u uniform in (0, 1) from
  // the prefix and the replica.
  static double rendezvous_score(std::uint64_t prefix, std::size_t replica, unsigned weight) {
    std::uint64_t x = prefix ^ (0x9e3779b97f4a7c15ULL * (replica + 1));
    x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27, x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    const double u = (static_cast<double>(x >> 11) + 0.5) * 0x1.0p-53;
    return weight / -std::log(u);
  }

  prefix_affinity_options options_;
  least_busy spread_;
  boost::unordered_flat_map<std::uint64_t, std::size_t> newer_, older_;
};

static_assert(BalancingPolicy<prefix_affinity>);

}  // namespace llmgate::inline v0
