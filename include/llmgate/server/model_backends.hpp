// model_backends: each configured model's own fallback list of backends,
// and model_backend_stage, the gateway pipeline's last stage, which hands a
// request to the list of its (possibly routed) model and names the answer
// after that model.
//
// Built once per worker thread from the config and the backend registry:
// a model's backends are made for that model (so that its upstream_model
// is what they send), on the worker's connection pool. The lookup from
// model name to list is one hash lookup per request, in a table the
// workers share.
#pragma once

#include <cstddef>      // std::size_t
#include <functional>   // std::equal_to
#include <memory>       // std::shared_ptr
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/any_io_executor.hpp>          // boost::asio::any_io_executor
#include <boost/asio/awaitable.hpp>                // boost::asio::awaitable
#include <boost/unordered/unordered_flat_map.hpp>  // model name -> position

#include "llmgate/backend/any_backend.hpp"       // any_backend
#include "llmgate/chat/chat.hpp"                 // chat_request, chat_response
#include "llmgate/detail/name_set.hpp"           // string_hash
#include "llmgate/backend/fallback.hpp"          // fallback_backend
#include "llmgate/backend/http_client.hpp"       // http_client
#include "llmgate/error.hpp"                     // llmgate::error
#include "llmgate/pipeline/request_context.hpp"  // request_context
#include "llmgate/backend/backend_registry.hpp"  // backend_registry
#include "llmgate/server/gateway_config.hpp"     // gateway_config

namespace llmgate::inline v0 {

/// Model name -> position in gateway_config::models, shared by the workers.
class model_index {
 public:
  model_index() = default;
  explicit model_index(const gateway_config& config) {
    for (std::size_t i = 0; i < config.models.size(); ++i) positions_.emplace(config.models[i].name, i);
  }
  /// The model's position, or npos.
  std::size_t find(std::string_view name) const {
    const auto found = positions_.find(name);
    return found == positions_.end() ? npos : found->second;
  }
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

 private:
  boost::unordered_flat_map<std::string, std::size_t, detail::string_hash, std::equal_to<>> positions_;
};

using model_backend_list = fallback_backend<any_backend>;

/// One worker's backends: a fallback list per model, in config order.
class model_backends {
 public:
  /// Throws llmgate::error when a backend cannot be made.
  model_backends(const gateway_config& config, const backend_registry& registry, const model_index& index,
                 const boost::asio::any_io_executor& executor)
      : index_(&index) {
    auto client = std::make_shared<http_client>(executor);
    lists_.reserve(config.models.size());
    for (const auto& model : config.models) {
      std::vector<any_backend> members;
      // Named by its members, so that a header naming it before the member
      // that answers is known (a streamed answer's) is still plain.
      std::string name;
      for (const auto& backend_name : model.backends) {
        const backend_config* backend = config.find_backend(backend_name);
        if (!backend) throw error(errc::invalid_request, "config: model \"" + model.name + "\" names no backend \"" + backend_name + "\"");
        const std::string_view upstream = !model.upstream_model.empty() ? std::string_view(model.upstream_model)
                                                                       : std::string_view(backend->model);
        members.push_back(registry.make(*backend, {.executor = executor, .client = client, .prices = config.prices,
                                                   .model = upstream}));
        name += (name.empty() ? "" : ">") + backend->name;
      }
      lists_.emplace_back(std::move(members), std::move(name));
    }
  }

  /// The list of the model called `name`, or nullptr.
  model_backend_list* find(std::string_view name) {
    const auto position = index_->find(name);
    return position == model_index::npos ? nullptr : &lists_[position];
  }

 private:
  const model_index* index_;
  std::vector<model_backend_list> lists_;
};

/// The stage that answers: the backends of the request's model.
class model_backend_stage {
 public:
  explicit model_backend_stage(model_backends& backends) noexcept : backends_(&backends) {}

  /// As backend_stage, over the list of the request's model. Throws
  /// llmgate::error for a model no list serves (a user stage that renamed
  /// it, say).
  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next&) {
    model_backend_list* list = backends_->find(request.model);
    if (!list) throw error(errc::invalid_request, "no backend serves model `" + request.model + "`");
    context.backend = std::string(list->name());  // known to the caller before the first chunk
    // Two statements, not `?:`: GCC 12 miscompiles co_await inside a conditional expression.
    chat_response response;
    if (context.streaming()) response = co_await list->stream(request, context.on_chunk);
    else response = co_await list->complete(request);
    if (!response.backend.empty()) context.backend = response.backend;  // the member that answered
    // The client sees the model it asked for (or that the router chose),
    // never the upstream's own name for it (llama.cpp's server answers
    // with its model file's path); the cost was priced by it already.
    response.model = request.model;
    co_return response;
  }

 private:
  model_backends* backends_;
};

}  // namespace llmgate::inline v0
