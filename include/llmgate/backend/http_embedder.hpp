// http_embedder: the Embedder concept (llmgate/embed/embedder.hpp) over a
// model server's embeddings API (/v1/embeddings through openai_backend,
// /api/embed through ollama_backend), so that a semantic cache can embed
// with a real model.
//
// Batching: embed() is synchronous and may be called from many threads at
// once. Texts that arrive while a request is in flight are gathered and
// sent together in the next one (up to max_batch texts), so N concurrent
// callers cost about N / max_batch round trips instead of N, without
// making a lone caller wait for company.
//
// The embedder runs its backend on an io_context and thread of its own;
// embed() must not be called from that thread. Its caller waits for the
// answer: code on an io thread uses async_http_embedder instead, which
// suspends only the request that waits. Vectors are scaled to unit
// length (the Embedder concept's vectors are meant for cosine) unless
// options.normalize is false.
#pragma once

#include <cstddef>       // std::size_t
#include <deque>         // std::deque
#include <future>        // std::promise
#include <mutex>         // std::mutex, std::lock_guard
#include <span>          // std::span
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code
#include <thread>        // std::thread
#include <utility>       // std::forward, std::move
#include <vector>        // std::vector

#include <boost/asio/co_spawn.hpp>            // net::co_spawn
#include <boost/asio/detached.hpp>            // net::detached
#include <boost/asio/executor_work_guard.hpp> // keeps the thread's io_context running
#include <boost/asio/io_context.hpp>          // net::io_context
#include <boost/asio/post.hpp>                // net::post

#include "llmgate/backend/backend.hpp"
#include "llmgate/backend/backend_error.hpp"
#include "llmgate/backend/detail/unit_vector.hpp"  // detail::copy_unit_vector
#include "llmgate/embed/embedder.hpp"
#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

namespace net = boost::asio;

/// B is an EmbeddingBackend constructed from (executor, args...), as the
/// HTTP adapters are.
template <EmbeddingBackend B>
class http_embedder {
 public:
  /// Throws llmgate::error(errc::invalid_request) when dimension or max_batch is 0.
  template <class... Args>
  explicit http_embedder(http_embedder_options options, Args&&... backend_arguments)
      : options_(std::move(options)), backend_(io_.get_executor(), std::forward<Args>(backend_arguments)...) {
    if (options_.dimension == 0 || options_.max_batch == 0)
      throw error(errc::invalid_request, "http_embedder needs a dimension and a batch size");
    thread_ = std::thread([this] { io_.run(); });
  }

  http_embedder(const http_embedder&) = delete;
  http_embedder& operator=(const http_embedder&) = delete;

  ~http_embedder() {
    work_.reset();
    thread_.join();
  }

  std::size_t dimension() const noexcept { return options_.dimension; }

  /// Writes the vector of `text` into `out` (dimension() floats). Returns
  /// errc::dimension_mismatch for a wrong `out` or a wrong answer, and the
  /// backend_error's code (upstream_unreachable, upstream_error...) when the
  /// server failed; `out` is then left alone.
  std::error_code embed(std::string_view text, std::span<float> out) const {
    if (out.size() != options_.dimension) return errc::dimension_mismatch;
    pending request{text, out, {}};
    auto result = request.done.get_future();
    bool start_flushing = false;
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(&request);
      start_flushing = !flushing_;
      flushing_ = true;
    }
    if (start_flushing) net::co_spawn(io_, flush(), net::detached);
    return result.get();
  }

  /// Texts sent upstream per request so far, on average (how well batching works).
  double mean_batch() const {
    std::lock_guard lock(mutex_);
    return batches_ ? static_cast<double>(texts_) / static_cast<double>(batches_) : 0.0;
  }

 private:
  struct pending {
    std::string_view text;
    std::span<float> out;
    std::promise<std::error_code> done;
  };

  // Sends what is queued, batch after batch, until the queue is empty.
  net::awaitable<void> flush() const {
    for (;;) {
      std::vector<pending*> batch;
      {
        std::lock_guard lock(mutex_);
        if (queue_.empty()) {
          flushing_ = false;
          co_return;
        }
        while (!queue_.empty() && batch.size() < options_.max_batch) {
          batch.push_back(queue_.front());
          queue_.pop_front();
        }
        ++batches_;
        texts_ += batch.size();
      }
      embedding_request request{.model = options_.model, .input = {}, .parameters = {}};
      for (const auto* item : batch) request.input.emplace_back(item->text);
      std::error_code failure;
      embedding_response response;
      try {
        response = co_await backend_.embed(request);
        if (response.embeddings.size() != batch.size()) failure = errc::upstream_protocol_error;
      } catch (const std::system_error& e) {  // backend_error, and llmgate::error
        failure = e.code();
      } catch (...) {  // every caller must hear back, whatever went wrong
        failure = errc::upstream_error;
      }
      for (std::size_t i = 0; i < batch.size(); ++i)
        batch[i]->done.set_value(failure ? failure : deliver(response.embeddings[i], batch[i]->out));
    }
  }

  std::error_code deliver(const std::vector<float>& vector, std::span<float> out) const {
    return detail::copy_unit_vector(vector, out, options_.normalize);
  }

  http_embedder_options options_;
  mutable net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_{io_.get_executor()};
  mutable B backend_;  // used by flush() on the embedder's thread only
  std::thread thread_;
  mutable std::mutex mutex_;
  mutable std::deque<pending*> queue_;
  mutable bool flushing_ = false;
  mutable std::size_t batches_ = 0;
  mutable std::size_t texts_ = 0;
};

}  // namespace llmgate::inline v0
