// POST /v1/embeddings: the gateway's own embedder (the one its semantic
// cache uses) under the configured embedding model's name.
#pragma once

#include <algorithm>  // std::count
#include <string>     // std::string
#include <vector>     // std::vector

#include <boost/json/parse.hpp>  // boost::json::parse

#include "llmgate/backend/embedding.hpp"  // parse_embedding_request, embedding_response, to_json
#include "llmgate/embed/embedder.hpp"     // Embedder
#include "llmgate/error.hpp"              // llmgate::error
#include "llmgate/server/exchange.hpp"    // exchange
#include "llmgate/server/responses.hpp"   // json_response, error_response

namespace llmgate::inline v0 {

template <Embedder E>
struct embeddings_handler {
  const E* embedder;
  std::string model;  ///< the name clients ask for

  http_response operator()(exchange& e) const {
    boost::system::error_code ec;
    const boost::json::value json = boost::json::parse(e.request.body(), ec);
    if (ec)
      return error_response(http_status::bad_request, "We could not parse the JSON body of your request: " + ec.message(),
                            "invalid_request_error", "invalid_json");
    embedding_request request;
    try {
      request = parse_embedding_request(json);
    } catch (const error& problem) {
      return error_response(http_status::bad_request, problem.what(), "invalid_request_error", "invalid_request");
    }
    if (request.model != model)
      return error_response(http_status::not_found,
                            "The model `" + request.model + "` does not exist; this gateway embeds with `" + model + "`.",
                            "invalid_request_error", "model_not_found", "model");
    embedding_response response;
    response.model = request.model;
    for (const auto& text : request.input) {
      std::vector<float> vector(embedder->dimension());
      (void)embedder->embed(text, vector);  // text the embedder cannot use embeds as zeros
      response.embeddings.push_back(std::move(vector));
      response.usage.prompt_tokens += 1 + std::count(text.begin(), text.end(), ' ');
    }
    return json_response(http_status::ok, to_json(response));
  }
};

}  // namespace llmgate::inline v0
