// backend_config: one entry of a "backends" list, in a gateway's config or
// an evaluation file: a name the models refer to, a kind
// (backend_registry.hpp makes one of each), where it is and how to reach
// it. Read and checked here, so that both files accept and refuse the same.
#pragma once

#include <array>        // std::array
#include <cstddef>      // std::size_t
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/backend/pool/pool_config.hpp"  // replica_config, balancing_config, read_replicas
#include "llmgate/config/config_reader.hpp"  // config_reader, refuse, within, check_url
#include "llmgate/detail/name_set.hpp"       // name_set (names must not repeat)
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

/// The backend kinds the gateway builds without help (backend_registry.hpp).
inline constexpr std::array<std::string_view, 5> builtin_backend_kinds = {"openai", "anthropic", "ollama", "llama.cpp", "demo"};

struct backend_config {
  std::string name;
  std::string kind = "openai";  ///< openai | anthropic | ollama | llama.cpp | demo | a kind registered in C++
  std::string base_url = {};    ///< openai: required; anthropic, ollama: their usual address when empty
  std::string api_key = {};     ///< from api_key_env; never logged
  std::string model = {};       ///< when set, replaces the model of every request sent (a model's upstream_model wins)
  unsigned retries = 2;         ///< retries after the first try (429, 5xx, network); each replica's in a pool
  boost::json::object options = {};  ///< the entry as written: fields of a kind's own
  std::vector<replica_config> replicas = {};  ///< a pool of deployments instead of base_url (pool_config.hpp); empty: none
  balancing_config balance = {};              ///< how a pool's requests are spread over its replicas
  std::string pool = {};                      ///< set by the registry for each replica it makes: its pool's name
};

namespace detail {

inline constexpr unsigned max_retries = 10;

// Refuses a kind that is not one of `kinds`, listing them.
inline void check_backend_kind(std::string_view kind, std::string_view where, std::span<const std::string_view> kinds) {
  for (const auto k : kinds)
    if (k == kind) return;
  std::string list;
  for (const auto k : kinds) list += (list.empty() ? "\"" : ", \"") + std::string(k) + "\"";
  refuse(config_path(where, "kind"), "must be one of " + list + " (not \"" + std::string(kind) + "\")");
}

// The checks of one backend built in C++ or read, at `where`; a kind
// registered in C++ checks its own fields.
inline void check_backend(const backend_config& backend, std::string_view where, std::span<const std::string_view> kinds) {
  if (backend.name.empty()) refuse(config_path(where, "name"), "must be a non-empty string");
  check_backend_kind(backend.kind, where, kinds);
  bool builtin = false;
  for (const auto k : builtin_backend_kinds) builtin = builtin || k == backend.kind;
  if (!backend.replicas.empty()) {
    if (!backend.base_url.empty())
      refuse(config_path(where, "replicas"), "and base_url exclude each other: a pool's addresses are its replicas'");
    check_replicas(backend.replicas, config_path(where, "replicas"));
    backend.balance.check(config_path(where, "balance"));
  }
  if (!builtin || backend.kind == "demo") return;
  if (backend.replicas.empty() && (backend.kind == "openai" || backend.kind == "llama.cpp" || !backend.base_url.empty()))
    check_url(config_path(where, "base_url"), backend.base_url);
  within<unsigned>(config_path(where, "retries"), backend.retries, 0, max_retries);
  if (const auto* tokens = backend.options.if_contains("max_tokens"); tokens && tokens->is_number())
    within(config_path(where, "max_tokens"), tokens->to_number<double>(), 1.0, 1e6);
}

// The "backends" list of a gateway's config (or an evaluation's), at
// `where_list`: each entry's keys those of its kind, names unique.
inline std::vector<backend_config> read_backends(const boost::json::array& backends, std::string_view where_list,
                                                 std::span<const std::string_view> kinds) {
  using read = config_reader;
  std::vector<backend_config> out;
  name_set names;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const std::string where = std::string(where_list) + "[" + std::to_string(i) + "]";
    const auto& entry = read::object_at(backends[i], where);
    backend_config backend;
    backend.name = read::string(entry, "name", where);
    if (backend.name.empty()) refuse(where + ".name", "must be a non-empty string");
    backend.kind = read::string(entry, "kind", where, backend.kind);
    check_backend_kind(backend.kind, where, kinds);
    if (backend.kind == "demo") {
      only_known_keys(entry, where, {"name", "kind"}, " of a demo backend");
    } else if (backend.kind == "anthropic") {
      only_known_keys(entry, where, {"name", "kind", "base_url", "api_key_env", "api_key", "model", "retries",
                                     "version", "max_tokens", "replicas", "balance"});
      (void)read::string(entry, "version", where);
      (void)read::count(entry, "max_tokens", where, 0);
    } else if (backend.kind == "openai" || backend.kind == "ollama") {
      only_known_keys(entry, where, {"name", "kind", "base_url", "api_key_env", "api_key", "model", "retries",
                                     "replicas", "balance"},
                      " of an " + backend.kind + " backend");
    }  // a kind registered in C++ reads its own keys from `options`
    backend.base_url = read::string(entry, "base_url", where);
    backend.api_key = read::secret(entry, where, false);
    backend.model = read::string(entry, "model", where);
    if (const auto* replicas = read::array(entry, "replicas", where)) {
      if (backend.kind == "demo") refuse(where + ".replicas", "is not for a demo backend");
      backend.replicas = read_replicas(*replicas, backend.name, where + ".replicas");
      backend.balance = balancing_config::read(read::object(entry, "balance", where), where + ".balance");
      backend.retries = 0;  // a pool's next replica is the retry
    } else if (entry.contains("balance")) {
      refuse(where + ".balance", "needs \"replicas\" to balance over");
    }
    backend.retries = read::narrow_count<unsigned>(entry, "retries", where, backend.retries, 0, max_retries);
    if (!names.insert(backend.name).second) refuse(where + ".name", "repeats \"" + backend.name + "\"");
    backend.options = entry;
    out.push_back(std::move(backend));
  }
  return out;
}

}  // namespace detail

}  // namespace llmgate::inline v0
