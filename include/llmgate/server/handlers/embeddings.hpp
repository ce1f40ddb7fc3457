// POST /v1/embeddings: the gateway's own embedder (the one its semantic
// cache uses) under the configured embedding model's name:
//   embeddings_handler<E>        a synchronous Embedder (the built-in
//                                hashing one), run on the io thread;
//   async_embeddings_handler<A>  an AsyncEmbedder (the "openai" kind's
//                                async_http_embedder): every input is
//                                asked for at once, so that they go
//                                upstream in one batch, and the io thread
//                                serves others meanwhile. An input the
//                                upstream does not embed answers 502 with
//                                its message.
#pragma once

#include <algorithm>    // std::count
#include <chrono>       // std::chrono::milliseconds
#include <cstdint>      // std::uint64_t
#include <exception>    // std::rethrow_exception
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/co_spawn.hpp>                        // boost::asio::co_spawn
#include <boost/asio/deferred.hpp>                        // boost::asio::deferred
#include <boost/asio/experimental/parallel_group.hpp>     // make_parallel_group: every input at once
#include <boost/asio/this_coro.hpp>                       // boost::asio::this_coro::executor
#include <boost/asio/use_awaitable.hpp>                   // boost::asio::use_awaitable
#include <boost/json/parse.hpp>                           // boost::json::parse

#include "llmgate/backend/async_embedder.hpp"  // AsyncEmbedder, embedding_result
#include "llmgate/backend/embedding.hpp"       // parse_embedding_request, embedding_response, to_json
#include "llmgate/embed/embedder.hpp"          // Embedder
#include "llmgate/chat/request_error.hpp"     // request_error
#include "llmgate/server/exchange.hpp"         // exchange, handler_result
#include "llmgate/server/responses.hpp"        // json_response, error_response

namespace llmgate::inline v0 {

namespace detail {

// The request's body read into `request`, or the error answer.
inline std::optional<http_response> read_embedding_request(const exchange& e, const std::string& model,
                                                           embedding_request& request) {
  boost::system::error_code ec;
  const boost::json::value json = boost::json::parse(e.request.body(), ec);
  if (ec)
    return error_response(http_status::bad_request, "We could not parse the JSON body of your request: " + ec.message(),
                          "invalid_request_error", "invalid_json");
  try {
    request = parse_embedding_request(json);
  } catch (const request_error& problem) {
    return error_response(http_status::bad_request, problem.what(), "invalid_request_error", "invalid_request",
                          problem.param());
  }
  if (request.model != model)
    return error_response(http_status::not_found,
                          "The model `" + request.model + "` does not exist; this gateway embeds with `" + model + "`.",
                          "invalid_request_error", "model_not_found", "model");
  return std::nullopt;
}

// A rough token count: words.
inline std::uint64_t words_in(const std::string& text) { return 1 + std::count(text.begin(), text.end(), ' '); }

}  // namespace detail

template <Embedder E>
struct embeddings_handler {
  const E* embedder;
  std::string model;  ///< the name clients ask for

  http_response operator()(exchange& e) const {
    embedding_request request;
    if (auto refused = detail::read_embedding_request(e, model, request)) return std::move(*refused);
    embedding_response response;
    response.model = request.model;
    for (const auto& text : request.input) {
      std::vector<float> vector(embedder->dimension());
      (void)embedder->embed(text, vector);  // text the embedder cannot use embeds as zeros
      response.embeddings.push_back(std::move(vector));
      response.usage.prompt_tokens += detail::words_in(text);
    }
    return json_response(http_status::ok, to_json(response, request.encoding));
  }
};

template <AsyncEmbedder A>
struct async_embeddings_handler {
  A embedder;         ///< copies of async_http_embedder share its batching
  std::string model;  ///< the name clients ask for
  std::chrono::milliseconds timeout;  ///< past it the request answers 504, as a chat request does

  handler_result operator()(exchange& e) const {
    embedding_request request;
    if (auto refused = detail::read_embedding_request(e, model, request)) co_return std::move(*refused);
    namespace net = boost::asio;
    const auto executor = co_await net::this_coro::executor;
    using operation = decltype(net::co_spawn(executor, embedder.embed(std::string_view()), net::deferred));
    std::vector<operation> asked;
    for (const auto& text : request.input) asked.push_back(net::co_spawn(executor, embedder.embed(text), net::deferred));
    e.deadline.arm(timeout);  // past it, the embeddings awaited are cancelled
    auto [order, failures, results] =
        co_await net::experimental::make_parallel_group(std::move(asked))
            .async_wait(net::experimental::wait_for_all(), net::use_awaitable);
    if (e.deadline.disarm()) {
      co_await net::this_coro::reset_cancellation_state();  // to write the 504
      co_return error_response(http_status::gateway_timeout,
                               "The embedding model did not answer within " + std::to_string(timeout.count()) + " ms.",
                               "timeout_error", "timeout");
    }
    embedding_response response;
    response.model = request.model;
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (failures[i]) std::rethrow_exception(failures[i]);  // not an expected failure: the session answers 500
      if (!results[i])
        co_return error_response(http_status::bad_gateway, "The embedding model failed: " + results[i].message,
                                 "api_error", "upstream_error");
      response.embeddings.push_back(std::move(results[i].vector));
      response.usage.prompt_tokens += detail::words_in(request.input[i]);
    }
    co_return json_response(http_status::ok, to_json(response, request.encoding));
  }
};

}  // namespace llmgate::inline v0
