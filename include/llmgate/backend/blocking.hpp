// The blocking facade: for programs that have no event loop of their own,
// a backend whose calls simply return their answer.
//
//   llmgate::blocking_backend<llmgate::openai_backend> model(
//       llmgate::openai_options{.api_key = key});
//   auto answer = model.complete(request);
#pragma once

#include <functional>  // std::function
#include <utility>     // std::forward, std::move

#include <boost/asio/awaitable.hpp>   // net::awaitable
#include <boost/asio/co_spawn.hpp>    // net::co_spawn
#include <boost/asio/io_context.hpp>  // net::io_context
#include <boost/asio/use_future.hpp>  // net::use_future

#include "llmgate/backend/backend.hpp"

namespace llmgate::inline v0 {

namespace net = boost::asio;

/// Runs `task` on `io` until it completes and returns its result (or throws
/// its exception). Must not be called from a thread running `io`.
template <class T>
T run_blocking(net::io_context& io, net::awaitable<T> task) {
  auto result = net::co_spawn(io, std::move(task), net::use_future);
  io.restart();
  io.run();
  return result.get();
}

/// A Backend B made on an io_context of its own, called synchronously. B is
/// constructed from (executor, args...), as the HTTP adapters are. One
/// thread at a time.
template <Backend B>
class blocking_backend {
 public:
  template <class... Args>
  explicit blocking_backend(Args&&... args)
      : backend_(io_.get_executor(), std::forward<Args>(args)...) {}

  chat_response complete(const chat_request& request) {
    return run_blocking(io_, backend_.complete(request));
  }

  /// Calls on_chunk for each piece as it arrives, then returns the whole answer.
  chat_response stream(const chat_request& request,
                       std::function<void(const chat_chunk&)> on_chunk) {
    return run_blocking(io_, backend_.stream(request, [&](const chat_chunk& chunk) -> net::awaitable<void> {
      on_chunk(chunk);
      co_return;
    }));
  }

  embedding_response embed(const embedding_request& request)
    requires EmbeddingBackend<B>
  {
    return run_blocking(io_, backend_.embed(request));
  }

  B& backend() noexcept { return backend_; }

 private:
  net::io_context io_;  // declared first: backend_ is made on it
  B backend_;
};

}  // namespace llmgate::inline v0
