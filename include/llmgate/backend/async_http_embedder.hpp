// async_http_embedder: the AsyncEmbedder concept over a model server's
// embeddings API, through any EmbeddingBackend: openai_backend for an
// OpenAI-compatible /embeddings (OpenAI, llama.cpp's server, Ollama's /v1,
// vLLM), ollama_backend for Ollama's /api/embed.
//
//   async_http_embedder embedder(
//       {.model = "nomic-embed-text", .dimension = 768, .endpoint = url + "/embeddings"},
//       openai_backend(executor, openai_options{.base_url = url, .api_key = key}));
//   co_await embedder.probe();                      // at start: throws, naming the endpoint
//   embedding_result r = co_await embedder.embed("What is the capital of France?");
//
// No thread of its own: the upstream request is awaited on the executor
// of a caller, so an io thread goes on with other requests while one waits
// for its vector (the blocking http_embedder instead parks its caller).
//
// Batching: texts asked for in the same turn of the event loop (a burst of
// requests whose handlers run back to back) go upstream together, up to
// max_batch per request. The request is sent from a task posted to the
// first caller's executor, so that the others of that turn join it first.
// A batch never waits for another batch in flight: one stalled request
// delays only the texts it carries.
//
// Copies share the backend and the batching. The backend must allow
// concurrent calls, as the HTTP adapters do (their client is thread-safe).
// A request still in flight keeps what it uses alive, so the embedder may
// be destroyed while callers are cancelled.
#pragma once

#include <cstddef>       // std::size_t
#include <exception>     // std::exception
#include <memory>        // std::shared_ptr, std::make_shared
#include <mutex>         // std::mutex, std::lock_guard
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error
#include <utility>       // std::move
#include <vector>        // std::vector

#include <boost/asio/any_io_executor.hpp>      // net::any_io_executor
#include <boost/asio/as_tuple.hpp>             // net::as_tuple: a cancelled wait as a value
#include <boost/asio/awaitable.hpp>            // net::awaitable
#include <boost/asio/bind_cancellation_slot.hpp>  // the batch's own cancellation
#include <boost/asio/cancellation_signal.hpp>  // net::cancellation_signal
#include <boost/asio/co_spawn.hpp>             // net::co_spawn
#include <boost/asio/detached.hpp>             // net::detached
#include <boost/asio/error.hpp>                // net::error::operation_aborted
#include <boost/asio/experimental/concurrent_channel.hpp>  // a thread-safe hand-over of one result
#include <boost/asio/post.hpp>                 // net::post
#include <boost/asio/strand.hpp>               // net::strand: a batch's task and its cancellation in order
#include <boost/asio/this_coro.hpp>            // net::this_coro::executor
#include <boost/asio/use_awaitable.hpp>        // net::use_awaitable
#include <boost/system/system_error.hpp>       // boost::system::system_error

#include "llmgate/backend/async_embedder.hpp"      // AsyncEmbedder, embedding_result
#include "llmgate/backend/backend.hpp"             // EmbeddingBackend
#include "llmgate/backend/detail/unit_vector.hpp"  // detail::copy_unit_vector, shared with http_embedder
#include "llmgate/backend/embedding.hpp"           // embedding_request, embedding_response, http_embedder_options
#include "llmgate/error.hpp"                       // llmgate::error, errc

namespace llmgate::inline v0 {

namespace net = boost::asio;

template <EmbeddingBackend B>
class async_http_embedder {
 public:
  /// Throws llmgate::error(errc::invalid_request) when dimension or max_batch is 0.
  async_http_embedder(http_embedder_options options, B backend)
      : state_(std::make_shared<state>(std::move(options), std::move(backend))) {
    if (state_->options.dimension == 0 || state_->options.max_batch == 0)
      throw error(errc::invalid_request, "async_http_embedder needs a dimension and a batch size");
  }

  std::size_t dimension() const noexcept { return state_->options.dimension; }
  const http_embedder_options& options() const noexcept { return state_->options; }

  /// The vector of `text`, unit length unless options.normalize is false;
  /// or, as values: the backend's failure (its code and message, which for
  /// a network failure name the URL), errc::upstream_protocol_error for an
  /// answer with another number of vectors, errc::dimension_mismatch for a
  /// vector of another length. A cancelled caller stops waiting at once
  /// (throwing operation_aborted); the upstream request is cancelled when
  /// no caller of its batch waits for it any more.
  net::awaitable<embedding_result> embed(std::string_view text) const {
    const auto executor = co_await net::this_coro::executor;
    auto receiver = std::make_shared<result_channel>(executor, 1);
    std::shared_ptr<batch> joined;
    bool first = false;
    {
      std::lock_guard lock(state_->mutex);
      first = !state_->open || state_->open->texts.size() == state_->options.max_batch;
      if (first) state_->open = std::make_shared<batch>(net::make_strand(executor));
      joined = state_->open;
      joined->texts.emplace_back(text);
      joined->receivers.push_back(receiver);
      ++joined->waiting;
    }
    if (first)
      net::post(joined->strand, [state = state_, joined] {
        net::co_spawn(joined->strand, send(state, joined),
                      net::bind_cancellation_slot(joined->cancel.slot(), net::detached));
      });
    auto [failed, result] = co_await receiver->async_receive(net::as_tuple(net::use_awaitable));
    if (failed) {  // the caller was cancelled
      leave(*state_, joined);
      throw boost::system::system_error(net::error::operation_aborted);
    }
    co_return std::move(result);
  }

  /// The readiness check a gateway runs at start: one embedding of a short
  /// text. Throws llmgate::error with the failure's code and a message that
  /// names the endpoint (options.endpoint, else the model) and the cause,
  /// e.g. that nothing answers there.
  net::awaitable<void> probe() const {
    const embedding_result result = co_await embed("llmgate readiness probe");
    if (result) co_return;
    const auto& options = state_->options;
    const std::string where = options.endpoint.empty() ? "model '" + options.model + "'"
                                                       : options.endpoint + " (model '" + options.model + "')";
    throw error(result.error, "no embeddings from " + where + ": " + result.message);
  }

 private:
  using result_channel =
      net::experimental::concurrent_channel<void(boost::system::error_code, embedding_result)>;

  // Texts going upstream in one request, and who waits for their vectors.
  struct batch {
    explicit batch(net::strand<net::any_io_executor> on) : strand(std::move(on)) {}
    net::strand<net::any_io_executor> strand;  // runs the request, and its cancellation
    net::cancellation_signal cancel;           // emitted on `strand` only
    // Under state::mutex:
    std::vector<std::string> texts;
    std::vector<std::shared_ptr<result_channel>> receivers;  // one per text, in order
    std::size_t waiting = 0;  // receivers whose caller still waits
    bool sent = false;        // closed to new texts
  };

  struct state {
    state(http_embedder_options o, B b) : options(std::move(o)), backend(std::move(b)) {}
    const http_embedder_options options;
    B backend;
    std::mutex mutex;
    std::shared_ptr<batch> open;  // the batch texts join now; null when none
  };

  // A caller that stopped waiting: when it was the last of a batch in
  // flight, the upstream request is cancelled (a batch not sent yet is
  // skipped by send() instead).
  static void leave(state& shared, const std::shared_ptr<batch>& left) {
    bool abandoned = false;
    {
      std::lock_guard lock(shared.mutex);
      abandoned = --left->waiting == 0 && left->sent;
    }
    if (abandoned)
      net::post(left->strand, [left] { left->cancel.emit(net::cancellation_type::terminal); });
  }

  // Sends one batch and hands every caller its result. Owns what it uses,
  // so it may outlive the embedder; never throws (it runs detached).
  static net::awaitable<void> send(std::shared_ptr<state> shared, std::shared_ptr<batch> texts) {
    embedding_request request{.model = shared->options.model, .input = {}, .parameters = {}};
    {
      std::lock_guard lock(shared->mutex);
      if (shared->open == texts) shared->open.reset();
      texts->sent = true;
      if (texts->waiting == 0) co_return;  // every caller left before it went
      request.input = texts->texts;
    }
    embedding_result failure;
    embedding_response response;
    try {
      response = co_await shared->backend.embed(request);
      if (response.embeddings.size() != request.input.size())
        failure = {.vector = {}, .error = errc::upstream_protocol_error,
                   .message = "asked for " + std::to_string(request.input.size()) + " vectors, received " +
                              std::to_string(response.embeddings.size())};
    } catch (const std::system_error& e) {  // backend_error, llmgate::error
      failure = {.vector = {}, .error = e.code(), .message = e.what()};
    } catch (const boost::system::system_error& e) {
      // Cancelled (nobody waits any more, or the io_context is going away)
      // or failed: either way those still waiting, if any, hear of it.
      failure = {.vector = {}, .error = e.code(), .message = e.what()};
    } catch (const std::exception& e) {  // every caller must hear back, whatever went wrong
      failure = {.vector = {}, .error = errc::upstream_error, .message = e.what()};
    }
    for (std::size_t i = 0; i < texts->receivers.size(); ++i)
      texts->receivers[i]->try_send(boost::system::error_code(),
                                    failure.error ? failure : vector_of(*shared, response, i));
  }

  static embedding_result vector_of(const state& shared, const embedding_response& response, std::size_t i) {
    embedding_result result{.vector = std::vector<float>(shared.options.dimension)};
    const auto& vector = response.embeddings[i];
    if (const auto failed = detail::copy_unit_vector(vector, result.vector, shared.options.normalize))
      return {.vector = {}, .error = failed,
              .message = "model '" + shared.options.model + "' answered " + std::to_string(vector.size()) +
                         " floats; the embedder's dimension is " + std::to_string(shared.options.dimension)};
    return result;
  }

  std::shared_ptr<state> state_;
};

}  // namespace llmgate::inline v0
