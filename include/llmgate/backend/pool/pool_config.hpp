// pool_config: a backend entry's replicas and how requests are balanced
// over them, read from the entry and checked here; configured_balancing,
// the policy a config names, chosen at run time.
//
//   {"name": "llama", "kind": "llama.cpp",
//    "replicas": ["http://10.0.0.1:8080", {"base_url": "http://10.0.0.2:8080", "weight": 2}],
//    "balance": {"policy": "prefix", "epsilon": 0.25, "prefix_tokens": 1024}}
//
// Each replica is the entry with its own base_url (and name, "<entry>#<i>"
// unless given), made by the entry's kind; "retries" are each replica's own
// and default to 0 in a pool, whose next replica is the retry. Policies:
// "prefix" (the default: prefix_affinity.hpp), "round_robin",
// "least_busy", "latency" (lowest_latency) and "weighted".
#pragma once

#include <array>        // std::array
#include <cstddef>      // std::size_t
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <variant>      // std::variant, std::visit
#include <vector>       // std::vector

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object
#include <boost/json/value.hpp>   // boost::json::value

#include "llmgate/backend/pool/balancing_policy.hpp"  // round_robin, least_busy, lowest_latency, weighted
#include "llmgate/backend/pool/prefix_affinity.hpp"   // prefix_affinity
#include "llmgate/config/config_reader.hpp"           // config_reader, refuse, within, check_url

namespace llmgate::inline v0 {

struct replica_config {
  std::string name;      ///< "<entry>#<i>" unless given
  std::string base_url;
  unsigned weight = 1;
};

inline constexpr std::array<std::string_view, 5> balancing_policies = {"prefix", "round_robin", "least_busy", "latency",
                                                                      "weighted"};

struct balancing_config {
  std::string policy = "prefix";
  double epsilon = 0.25;            ///< prefix: how far over the mean load a replica keeps its prefixes
  std::size_t prefix_tokens = 1024; ///< prefix: how much of a plain request's leading messages keys it (4 bytes a token)

  /// The entry's "balance" at `where` (absent: the defaults).
  static balancing_config read(const boost::json::object* section, std::string_view where) {
    using read = detail::config_reader;
    balancing_config config;
    if (!section) return config;
    detail::only_known_keys(*section, where, {"policy", "epsilon", "prefix_tokens"});
    config.policy = read::string(*section, "policy", where, config.policy);
    config.epsilon = read::number(*section, "epsilon", where, config.epsilon);
    config.prefix_tokens = read::narrow_count<std::size_t>(*section, "prefix_tokens", where, config.prefix_tokens, 1,
                                                           1'000'000);
    config.check(where);
    return config;
  }

  void check(std::string_view where) const {
    bool known = false;
    for (const auto name : balancing_policies) known = known || name == policy;
    if (!known) {
      std::string list;
      for (const auto name : balancing_policies) list += (list.empty() ? "\"" : ", \"") + std::string(name) + "\"";
      detail::refuse(detail::config_path(where, "policy"), "must be one of " + list + " (not \"" + policy + "\")");
    }
    detail::within(detail::config_path(where, "epsilon"), epsilon, 0.0, 10.0);
    detail::within<std::size_t>(detail::config_path(where, "prefix_tokens"), prefix_tokens, 1, 1'000'000);
  }
};

namespace detail {

// The entry's "replicas" at `where`: each a URL or {"base_url", "weight", "name"}.
inline std::vector<replica_config> read_replicas(const boost::json::array& list, std::string_view entry_name,
                                                 std::string_view where) {
  using read = config_reader;
  if (list.empty()) refuse(where, "must list at least one replica");
  std::vector<replica_config> replicas;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = std::string(where) + "[" + std::to_string(i) + "]";
    replica_config replica{.name = std::string(entry_name) + "#" + std::to_string(i), .base_url = {}};
    if (const auto* url = list[i].if_string()) {
      replica.base_url = std::string(*url);
    } else {
      const auto& fields = read::object_at(list[i], at);
      only_known_keys(fields, at, {"base_url", "weight", "name"});
      replica.base_url = read::string(fields, "base_url", at);
      replica.weight = read::narrow_count<unsigned>(fields, "weight", at, replica.weight, 1, 1000);
      replica.name = read::string(fields, "name", at, replica.name);
    }
    replicas.push_back(std::move(replica));
  }
  return replicas;
}

// The replicas' own checks: URLs, weights, names unique.
inline void check_replicas(const std::vector<replica_config>& replicas, std::string_view where) {
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    const std::string at = std::string(where) + "[" + std::to_string(i) + "]";
    if (replicas[i].name.empty()) refuse(at + ".name", "must be a non-empty string");
    check_url(at + ".base_url", replicas[i].base_url);
    within<unsigned>(at + ".weight", replicas[i].weight, 1, 1000);
    for (std::size_t j = 0; j < i; ++j)
      if (replicas[j].name == replicas[i].name) refuse(at + ".name", "repeats \"" + replicas[i].name + "\"");
  }
}

}  // namespace detail

/// The policy a balancing_config names, as one type.
class configured_balancing {
 public:
  explicit configured_balancing(const balancing_config& config = {}) : policy_(make(config)) {}

  replica_choice choose(const pool_request& request, std::span<const replica_view> replicas) {
    return std::visit([&](auto& policy) { return policy.choose(request, replicas); }, policy_);
  }

 private:
  using any_policy = std::variant<prefix_affinity, round_robin, least_busy, lowest_latency, weighted>;

  static any_policy make(const balancing_config& config) {
    if (config.policy == "round_robin") return round_robin{};
    if (config.policy == "least_busy") return least_busy{};
    if (config.policy == "latency") return lowest_latency{};
    if (config.policy == "weighted") return weighted{};
    return prefix_affinity({.epsilon = config.epsilon});
  }

  any_policy policy_;
};

static_assert(BalancingPolicy<configured_balancing>);

}  // namespace llmgate::inline v0
