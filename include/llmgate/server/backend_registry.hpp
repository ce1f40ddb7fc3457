// backend_registry: how the gateway makes a backend of each kind the config
// names. It knows openai, anthropic, ollama and demo; a program adds its
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
#pragma once

#include <functional>   // std::function
#include <map>          // std::map
#include <memory>       // std::shared_ptr
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/any_io_executor.hpp>  // boost::asio::any_io_executor

#include "llmgate/backend/anthropic_backend.hpp"  // anthropic_backend
#include "llmgate/backend/any_backend.hpp"        // any_backend
#include "llmgate/backend/http_client.hpp"        // http_client
#include "llmgate/backend/ollama_backend.hpp"     // ollama_backend
#include "llmgate/backend/openai_backend.hpp"     // openai_backend
#include "llmgate/backend/price_table.hpp"        // price_table
#include "llmgate/backend/retry.hpp"              // retrying_backend
#include "llmgate/error.hpp"                      // llmgate::error
#include "llmgate/prompt/prompt_statistics.hpp"   // prompt_statistics
#include "llmgate/server/config.hpp"              // backend_config
#include "llmgate/server/demo_backend.hpp"        // make_demo_backend

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

  /// No kinds at all.
  backend_registry() = default;

  /// openai, anthropic, ollama and demo.
  static backend_registry builtin() {
    backend_registry registry;
    registry.add("openai", [](const backend_config& b, const backend_setup& s) {
      return retried(openai_backend(s.client, {.name = b.name, .base_url = b.base_url, .api_key = b.api_key,
                                               .model = std::string(s.model), .prices = s.prices}),
                     b);
    });
    registry.add("anthropic", [](const backend_config& b, const backend_setup& s) {
      anthropic_options options{.name = b.name, .api_key = b.api_key, .model = std::string(s.model), .prices = s.prices};
      if (!b.base_url.empty()) options.base_url = b.base_url;
      if (const auto* version = b.options.if_contains("version"); version && version->is_string())
        options.version = std::string(version->get_string());
      if (const auto* tokens = b.options.if_contains("max_tokens"); tokens && tokens->is_number())
        options.max_tokens = tokens->to_number<std::uint64_t>();
      return retried(anthropic_backend(s.client, std::move(options)), b);
    });
    registry.add("ollama", [](const backend_config& b, const backend_setup& s) {
      ollama_options options{.name = b.name, .model = std::string(s.model), .prices = s.prices};
      if (!b.base_url.empty()) options.base_url = b.base_url;
      return retried(ollama_backend(s.client, std::move(options)), b);
    });
    registry.add("demo", [](const backend_config& b, const backend_setup&) { return any_backend(make_demo_backend(b.name)); });
    return registry;
  }

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

  /// The backend `config` describes. Throws llmgate::error naming the
  /// kind when none is registered.
  any_backend make(const backend_config& config, const backend_setup& setup) const {
    const auto found = factories_.find(config.kind);
    if (found == factories_.end())
      throw error(errc::invalid_request, "backend \"" + config.name + "\": no backend kind \"" + config.kind + "\"");
    return found->second(config, setup);
  }

  /// `backend` with the config's retries after the first try.
  template <Backend B>
  static any_backend retried(B backend, const backend_config& config) {
    return any_backend(retrying_backend(std::move(backend), retry_policy{.max_attempts = config.retries + 1}));
  }

 private:
  std::map<std::string, factory, std::less<>> factories_;
};

}  // namespace llmgate::inline v0
