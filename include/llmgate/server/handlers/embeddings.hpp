// POST /v1/embeddings: the gateway's own embedder (the one its semantic
// cache uses) under its model's name, and each configured model of mode
// "embedding" through its backends:
//   embeddings_handler<E>        a synchronous Embedder (the built-in
//                                hashing one), run on the io thread;
//   async_embeddings_handler<A>  an AsyncEmbedder (the "openai" kind's
//                                async_http_embedder): every input is
//                                asked for at once, so that they go
//                                upstream in one batch, and the io thread
//                                serves others meanwhile. An input the
//                                upstream does not embed answers 502 (the
//                                upstream's words go to the log);
//   embeddings_route<Builtin>    reads the request (400 naming the field)
//                                and hands it to the built-in handler or
//                                to the model's backends (404 for a model
//                                the gateway does not serve, 400 for a
//                                chat model).
// Vectors are written as the request's encoding_format asks: floats, or
// base64 (what OpenAI's client libraries ask for by default).
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

#include <boost/asio/co_spawn.hpp>                     // boost::asio::co_spawn
#include <boost/asio/deferred.hpp>                     // boost::asio::deferred
#include <boost/asio/experimental/parallel_group.hpp>  // make_parallel_group: every input at once
#include <boost/asio/this_coro.hpp>                    // boost::asio::this_coro::executor
#include <boost/asio/use_awaitable.hpp>                // boost::asio::use_awaitable
#include <boost/json/parse.hpp>                        // boost::json::parse

#include "llmgate/backend/async_embedder.hpp"         // AsyncEmbedder, embedding_result
#include "llmgate/backend/backend_error.hpp"          // backend_error
#include "llmgate/backend/embedding.hpp"              // parse_embedding_request, embedding_response, to_json
#include "llmgate/wire/openai_wire.hpp"               // request_json_options
#include "llmgate/chat/request_error.hpp"             // request_error
#include "llmgate/embed/embedder.hpp"                 // Embedder
#include "llmgate/prompt/tokenizer.hpp"               // estimated_tokenizer
#include "llmgate/server/gateway_config.hpp"          // gateway_config, model_mode
#include "llmgate/server/client_failure.hpp"          // client_failure_of
#include "llmgate/server/http/exchange.hpp"           // exchange, handler_result
#include "llmgate/server/model_backends.hpp"          // model_backends
#include "llmgate/server/http/responses.hpp"          // json_response, error_response
#include "llmgate/server/operations/request_log.hpp"  // request_log

namespace llmgate::inline v0 {

namespace detail {

// A rough token count: words.
inline std::uint64_t words_in(const std::string& text) { return 1 + std::count(text.begin(), text.end(), ' '); }

inline http_response embedding_timeout(std::chrono::milliseconds timeout) {
  return error_response(http_status::gateway_timeout,
                        "The embedding model did not answer within " + std::to_string(timeout.count()) + " ms.",
                        "timeout_error", "timeout");
}

}  // namespace detail

template <Embedder E>
struct embeddings_handler {
  const E* embedder;
  std::string model;  ///< the name clients ask for

  http_response operator()(const embedding_request& request, exchange&) const {
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
  request_log* log;   ///< where an upstream's failure is told in full (its URL included)

  handler_result operator()(const embedding_request& request, exchange& e) const {
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
      co_return detail::embedding_timeout(timeout);
    }
    embedding_response response;
    response.model = request.model;
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (failures[i]) std::rethrow_exception(failures[i]);  // not an expected failure: the session answers 500
      if (!results[i]) {
        log->event("embedder_failure", {{"model", model}, {"error", results[i].message}});
        co_return error_response(http_status::bad_gateway, "The upstream embedding model server failed.",
                                 "upstream_error", "upstream_error");
      }
      response.embeddings.push_back(std::move(results[i].vector));
      response.usage.prompt_tokens += detail::words_in(request.input[i]);
    }
    co_return json_response(http_status::ok, to_json(response, request.encoding));
  }
};

/// Builtin: embeddings_handler or async_embeddings_handler. `backends`
/// are the worker's, alive while the route is.
template <class Builtin>
class embeddings_route {
 public:
  embeddings_route(Builtin builtin, const gateway_config& config, model_backends& backends, request_log& log)
      : builtin_(std::move(builtin)), config_(&config), backends_(&backends), log_(&log) {}

  handler_result operator()(exchange& e) const {
    embedding_request request;
    boost::system::error_code ec;
    const boost::json::value json = boost::json::parse(e.request.body(), ec, {}, request_json_options(config_->limits.max_json_depth));
    if (ec)
      co_return error_response(http_status::bad_request,
                               "We could not parse the JSON body of your request: " + ec.message(),
                               "invalid_request_error", "invalid_json");
    try {
      request = parse_embedding_request(json);
    } catch (const request_error& problem) {
      co_return error_response(http_status::bad_request, problem.what(), "invalid_request_error",
                               problem.openai_code(), problem.param());
    }
    if (auto refusal = over_limits(request)) co_return std::move(*refusal);
    if (request.model == builtin_.model) co_return co_await served(builtin_(request, e));
    const model_config* model = config_->find_model(request.model);
    if (!model)
      co_return error_response(http_status::not_found,
                               "The model `" + request.model + "` does not exist or you do not have access to it.",
                               "invalid_request_error", "model_not_found", "model");
    if (model->mode != model_mode::embedding)
      co_return error_response(http_status::bad_request,
                               "`" + request.model + "` is a chat model: ask /v1/chat/completions, or an embedding model here.",
                               "invalid_request_error", "model_not_supported", "model");
    co_return co_await by_backends(std::move(request), e);
  }

 private:
  // The 400 for a request over limits.max_embedding_inputs or
  // limits.max_embedding_input_tokens: each input costs a vector in the
  // answer, however short it is.
  std::optional<http_response> over_limits(const embedding_request& request) const {
    const auto refuse = [](const std::string& message) {
      return error_response(http_status::bad_request, message, "invalid_request_error", "invalid_value", "input");
    };
    if (request.input.size() > config_->limits.max_embedding_inputs)
      return refuse("input has " + std::to_string(request.input.size()) + " items; one request may have at most " +
                    std::to_string(config_->limits.max_embedding_inputs) + ".");
    std::uint64_t tokens = 0;
    for (const auto& text : request.input) tokens += estimated_tokenizer{}.count(text);
    if (tokens > config_->limits.max_embedding_input_tokens)
      return refuse("input has about " + std::to_string(tokens) + " tokens; one request may have at most " +
                    std::to_string(config_->limits.max_embedding_input_tokens) + ".");
    return std::nullopt;
  }

  // The built-in handler's answer, whether it is an http_response or a handler_result.
  static handler_result served(http_response response) { co_return std::optional<http_response>(std::move(response)); }
  static handler_result served(handler_result pending) { return pending; }

  handler_result by_backends(embedding_request request, exchange& e) const {
    const std::string asked = request.model;
    const std::chrono::milliseconds timeout(config_->limits.request_timeout_ms);
    e.deadline.arm(timeout);
    embedding_response response;
    std::exception_ptr failure;
    try {
      response = co_await backends_->find(asked)->embed(request);
    } catch (...) {
      failure = std::current_exception();
    }
    if (e.deadline.disarm()) {
      co_await boost::asio::this_coro::reset_cancellation_state();  // to write the 504
      co_return detail::embedding_timeout(timeout);
    }
    if (failure) co_return failure_response(failure);
    response.model = asked;  // the name the client knows, not the upstream's
    co_return json_response(http_status::ok, to_json(response, request.encoding));
  }

  // What client_failure_of says of a backend's failure (logged in full);
  // anything else is rethrown, and the session answers 500.
  http_response failure_response(std::exception_ptr failure) const {
    try {
      std::rethrow_exception(failure);
    } catch (const backend_error& e) {
      log_->event("backend_failure", {{"backend", e.backend()}, {"upstream_status", e.status()}, {"error", e.what()}});
      client_failure answer = client_failure_of(e);
      http_response reply = json_response(answer.status, answer.body);
      if (answer.retry_after) reply.set(boost::beast::http::field::retry_after, std::to_string(answer.retry_after->count()));
      return reply;
    }
  }

  Builtin builtin_;
  const gateway_config* config_;
  model_backends* backends_;
  request_log* log_;
};

}  // namespace llmgate::inline v0
