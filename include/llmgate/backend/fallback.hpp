// fallback_backend: an ordered list of backends that is itself a Backend.
// A request goes to the first; when it fails (a backend_error) before a
// streamed chunk reached the caller, the next one is asked, and so on. After
// the first chunk nothing fails over: the caller has seen that answer begin.
// Nor does a request the upstream refused as the client's mistake
// (backend_error::client_error(): a 400, a prompt over the context): every
// backend would refuse it, so its error goes up at once. When every
// backend failed, the last one's error is thrown.
//
// Different providers name their models differently: give each adapter its
// own `model` option so that a fallback asks each for a model it has.
// Backends of different types share a list as any_backend.
#pragma once

#include <exception>    // std::exception_ptr, std::current_exception, std::rethrow_exception
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>  // net::awaitable

#include "llmgate/backend/backend.hpp"
#include "llmgate/backend/backend_error.hpp"
#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

namespace net = boost::asio;

template <Backend B>
class fallback_backend {
 public:
  /// Throws llmgate::error(errc::invalid_request) when `backends` is empty.
  explicit fallback_backend(std::vector<B> backends, std::string name = "fallback")
      : backends_(std::move(backends)), name_(std::move(name)) {
    if (backends_.empty()) throw error(errc::invalid_request, "a fallback list needs a backend");
  }

  std::string_view name() const noexcept { return name_; }
  std::vector<B>& backends() noexcept { return backends_; }

  net::awaitable<chat_response> complete(const chat_request& request) {
    std::exception_ptr last;
    for (auto& backend : backends_) {
      try {
        co_return co_await backend.complete(request);
      } catch (const backend_error& failure) {
        if (failure.client_error()) throw;
        last = std::current_exception();
      }
    }
    std::rethrow_exception(last);
  }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    bool delivered = false;
    chunk_handler noting = [&](const chat_chunk& chunk) -> net::awaitable<void> {
      delivered = true;
      co_await on_chunk(chunk);
    };
    std::exception_ptr last;
    for (auto& backend : backends_) {
      try {
        co_return co_await backend.stream(request, noting);
      } catch (const backend_error& failure) {
        if (delivered || failure.client_error()) throw;
        last = std::current_exception();
      }
    }
    std::rethrow_exception(last);
  }

  /// Asks the backends that can embed, in order.
  net::awaitable<embedding_response> embed(const embedding_request& request)
    requires EmbeddingBackend<B>
  {
    std::exception_ptr last;
    for (auto& backend : backends_) {
      try {
        co_return co_await backend.embed(request);
      } catch (const backend_error& failure) {
        if (failure.client_error()) throw;
        last = std::current_exception();
      }
    }
    std::rethrow_exception(last);
  }

 private:
  std::vector<B> backends_;
  std::string name_;
};

}  // namespace llmgate::inline v0
