// GET /v1/models: the models of the config, then the embedding model, in
// OpenAI's list form. The body is written once, at start.
#pragma once

#include <string>  // std::string

#include <boost/json/array.hpp>      // boost::json::array
#include <boost/json/serialize.hpp>  // boost::json::serialize

#include "llmgate/server/gateway_config.hpp"  // gateway_config
#include "llmgate/server/http/exchange.hpp"   // exchange
#include "llmgate/server/http/responses.hpp"  // text_response

namespace llmgate::inline v0 {

class models_handler {
 public:
  explicit models_handler(const gateway_config& config) {
    boost::json::array data;
    for (const auto& model : config.models)
      data.push_back({{"id", model.name}, {"object", "model"}, {"created", 0}, {"owned_by", "llmgate"}});
    data.push_back({{"id", config.semantic_cache.embedder.model}, {"object", "model"}, {"created", 0}, {"owned_by", "llmgate"}});
    body_ = boost::json::serialize(boost::json::object{{"object", "list"}, {"data", std::move(data)}});
  }

  http_response operator()(exchange&) const { return text_response("application/json", body_); }

 private:
  std::string body_;
};

}  // namespace llmgate::inline v0
