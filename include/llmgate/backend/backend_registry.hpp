// backend_registry: how the gateway makes a backend of each kind the config
// names. It knows openai, anthropic, ollama, llama.cpp and demo; a program adds its
// own kinds in C++ without touching the gateway's headers:
//
//   auto backends = llmgate::backend_registry::builtin();
//   backends.add("mykind", [](const llmgate::backend_config& config, const llmgate::backend_setup& setup) {
//     return llmgate::any_backend(my_backend(setup.client, config.options));
//   });
//   llmgate::gateway gateway(config, std::move(backends));
//
// A factory is called once per worker thread and model that uses the
// backend (each worker has its own connection pool, `setup.client`), at
// start only. retried(backend, config) wraps a backend in the retries the
// config's "retries" asks for (network failures, 429 and 5xx; see
// backend/retry.hpp), as the built-in kinds do; calling it inside the
// factory keeps one type erasure (any_backend) per call.
//
// An entry with "replicas" is made as a backend_pool (backend/pool/): its
// kind's factory makes each replica from the entry with the replica's name
// and base_url, and every worker's pool of one entry shares one
// replica_pool (loads, health, the policy's memory), which pools() lists
// for /metrics.
//
// Options of the built-in kinds, read from the backend's entry:
//   openai     "prompt_cache_key": false stops sending a PML prompt's key
//   anthropic  "version", "max_tokens", "cache_min_tokens" (a breakpoint's
//              shortest prefix; the model's minimum when absent),
//              "cache_breakpoints" (0 to 4; 4 when absent)
//   llama.cpp  "slots" (the server's --parallel; asked of the server when
//              absent), "slot_files": false stops saving and restoring
//              schemas as slot files, "cache_reuse" (n_cache_reuse sent with
//              PML prompts), "shared_slot_files": true for a pool whose
//              servers share one --slot-save-path (a replica restores what
//              another saved). Every backend made for one llama.cpp
//              entry (one per worker) shares its slots and slot files.
#pragma once

#include <functional>   // std::function
#include <algorithm>    // std::min
#include <map>          // std::map
#include <memory>       // std::shared_ptr
#include <mutex>        // std::mutex, std::scoped_lock
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/any_io_executor.hpp>  // boost::asio::any_io_executor

#include "llmgate/backend/anthropic_backend.hpp"  // anthropic_backend
#include "llmgate/backend/any_backend.hpp"        // any_backend
#include "llmgate/backend/backend_config.hpp"     // backend_config
#include "llmgate/backend/demo_backend.hpp"       // make_demo_backend
#include "llmgate/backend/http_client.hpp"        // http_client
#include "llmgate/backend/llama_cpp_backend.hpp"  // llama_cpp_backend, llama_cpp_slots
#include "llmgate/backend/ollama_backend.hpp"     // ollama_backend
#include "llmgate/backend/pool/backend_pool.hpp"  // backend_pool, replica_pool
#include "llmgate/backend/pool/pool_config.hpp"   // configured_balancing
#include "llmgate/backend/openai_backend.hpp"     // openai_backend
#include "llmgate/backend/price_table.hpp"        // price_table
#include "llmgate/backend/retry.hpp"              // retrying_backend
#include "llmgate/error.hpp"                      // llmgate::error
#include "llmgate/prompt/prompt_statistics.hpp"   // prompt_statistics

namespace llmgate::inline v0 {

/// What a factory gets beside the backend's own config.
struct backend_setup {
  boost::asio::any_io_executor executor;      ///< the worker's
  std::shared_ptr<http_client> client;        ///< the worker's connection pool, shared by its backends
  std::shared_ptr<const price_table> prices;  ///< the config's prices, by model name
  std::string_view model = {};                ///< the model to send upstream: the model's upstream_model, else the backend's model; empty: the request's
  std::shared_ptr<llmgate::prompt_statistics> prompt_statistics = {};  ///< the gateway's PML statistics (llama.cpp slot files); may be null
};

class backend_registry {
 public:
  using factory = std::function<any_backend(const backend_config&, const backend_setup&)>;
  using pool_state = replica_pool<configured_balancing>;

  /// No kinds at all.
  backend_registry() = default;

  /// openai, anthropic, ollama, llama.cpp and demo. (A template only so
  /// that a program can compile it once, with the gateway: see
  /// LLMGATE_EXTERN_GATEWAY in server/gateway.hpp.)
  template <class = void>
  static backend_registry builtin();

  /// Adds a kind, or replaces the factory of one.
  backend_registry& add(std::string kind, factory make) {
    factories_[std::move(kind)] = std::move(make);
    return *this;
  }

  bool contains(std::string_view kind) const { return factories_.find(kind) != factories_.end(); }

  /// The kinds, for gateway_config::from_json.
  std::vector<std::string_view> kinds() const {
    std::vector<std::string_view> names;
    for (const auto& [kind, make] : factories_) names.push_back(kind);
    return names;
  }

  /// The backend `config` describes (a pool where it has replicas).
  /// Throws llmgate::error naming the kind when none is registered.
  any_backend make(const backend_config& config, const backend_setup& setup) const {
    const auto found = factories_.find(config.kind);
    if (found == factories_.end())
      throw error(errc::invalid_request, "backend \"" + config.name + "\": no backend kind \"" + config.kind + "\"");
    if (config.replicas.empty()) return found->second(config, setup);
    std::vector<any_backend> replicas;
    for (const auto& replica : config.replicas) {
      backend_config one = config;
      one.name = replica.name;
      one.base_url = replica.base_url;
      one.replicas.clear();
      one.pool = config.name;
      replicas.push_back(found->second(one, setup));
    }
    return any_backend(backend_pool<any_backend, configured_balancing>(config.name, std::move(replicas),
                                                                       pools_->state_of(config),
                                                                       config.balance.prefix_tokens * bytes_per_token_estimate));
  }

  /// Each pool made so far, by its entry's name, with its shared state.
  std::vector<std::pair<std::string, std::shared_ptr<const pool_state>>> pools() const {
    std::scoped_lock lock(pools_->mutex);
    return {pools_->states.begin(), pools_->states.end()};
  }

  /// `backend` with the config's retries after the first try.
  template <Backend B>
  static any_backend retried(B backend, const backend_config& config) {
    return any_backend(retrying_backend(std::move(backend), retry_policy{.max_attempts = config.retries + 1}));
  }

 private:
  // One replica_pool per pooled entry, shared by the copies of this
  // registry and so by every worker's pool of that entry.
  struct pool_states {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<pool_state>> states;

    std::shared_ptr<pool_state> state_of(const backend_config& config) {
      std::scoped_lock lock(mutex);
      auto& state = states[config.name];
      if (!state) {
        std::vector<replica_spec> replicas;
        for (const auto& replica : config.replicas) replicas.push_back({.name = replica.name, .weight = replica.weight});
        state = std::make_shared<pool_state>(std::move(replicas), configured_balancing(config.balance));
      }
      return state;
    }
  };

  std::map<std::string, factory, std::less<>> factories_;
  std::shared_ptr<pool_states> pools_ = std::make_shared<pool_states>();
};

template <class>
backend_registry backend_registry::builtin() {
  backend_registry registry;
  registry.add("openai", [](const backend_config& b, const backend_setup& s) {
    openai_options options{.name = b.name, .base_url = b.base_url, .api_key = b.api_key,
                           .model = std::string(s.model), .prices = s.prices};
    if (const auto* key = b.options.if_contains("prompt_cache_key"); key && key->is_bool())
      options.prompt_cache_key = key->get_bool();
    return retried(openai_backend(s.client, std::move(options)), b);
  });
  registry.add("anthropic", [](const backend_config& b, const backend_setup& s) {
    anthropic_options options{.name = b.name, .api_key = b.api_key, .model = std::string(s.model), .prices = s.prices};
    if (!b.base_url.empty()) options.base_url = b.base_url;
    if (const auto* version = b.options.if_contains("version"); version && version->is_string())
      options.version = std::string(version->get_string());
    if (const auto* tokens = b.options.if_contains("max_tokens"); tokens && tokens->is_number())
      options.max_tokens = tokens->to_number<std::uint64_t>();
    if (const auto* tokens = b.options.if_contains("cache_min_tokens"); tokens && tokens->is_number())
      options.cache_min_tokens = tokens->to_number<std::size_t>();
    if (const auto* count = b.options.if_contains("cache_breakpoints"); count && count->is_number())
      options.cache_breakpoints = std::min<std::size_t>(count->to_number<std::size_t>(), anthropic_max_breakpoints);
    return retried(anthropic_backend(s.client, std::move(options)), b);
  });
  // One slots record per llama.cpp entry (or replica), shared by the
  // backends every worker makes for it, and one slot-file table per pool
  // whose replicas share their files (the registry is copied, the maps are
  // not).
  struct llama_servers {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<llama_cpp_slots>> slots;
    std::map<std::string, std::shared_ptr<llama_cpp_slot_files>> pooled_files;
  };
  auto servers = std::make_shared<llama_servers>();
  registry.add("llama.cpp", [servers](const backend_config& b, const backend_setup& s) {
    llama_cpp_options options{.name = b.name, .api_key = b.api_key, .model = std::string(s.model),
                              .prices = s.prices, .statistics = s.prompt_statistics};
    if (!b.base_url.empty()) options.base_url = b.base_url;
    if (const auto* slots = b.options.if_contains("slots"); slots && slots->is_number())
      options.slots = slots->to_number<std::size_t>();
    if (const auto* files = b.options.if_contains("slot_files"); files && files->is_bool())
      options.slot_files = files->get_bool();
    if (const auto* reuse = b.options.if_contains("cache_reuse"); reuse && reuse->is_number())
      options.cache_reuse = reuse->to_number<std::size_t>();
    const auto* pooled = b.options.if_contains("shared_slot_files");
    const bool shares_files = !b.pool.empty() && pooled && pooled->is_bool() && pooled->get_bool();
    {
      std::scoped_lock lock(servers->mutex);
      auto& shared = servers->slots[b.name + "\n" + options.base_url];
      if (!shared) {
        auto files = std::make_shared<llama_cpp_slot_files>();
        if (shares_files) {
          auto& pool_files = servers->pooled_files[b.pool];
          if (!pool_files) pool_files = files;
          files = pool_files;
        }
        shared = std::make_shared<llama_cpp_slots>(std::move(files));
      }
      options.shared = shared;
    }
    return retried(llama_cpp_backend(s.client, std::move(options)), b);
  });
  registry.add("ollama", [](const backend_config& b, const backend_setup& s) {
    ollama_options options{.name = b.name, .model = std::string(s.model), .prices = s.prices};
    if (!b.base_url.empty()) options.base_url = b.base_url;
    return retried(ollama_backend(s.client, std::move(options)), b);
  });
  registry.add("demo", [](const backend_config& b, const backend_setup&) { return any_backend(make_demo_backend(b.name)); });
  return registry;
}

#ifdef LLMGATE_EXTERN_GATEWAY
extern template backend_registry backend_registry::builtin<>();
#endif

}  // namespace llmgate::inline v0
