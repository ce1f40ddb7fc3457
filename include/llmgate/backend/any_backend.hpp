// any_backend: any Backend behind one type, for lists of backends of
// different kinds (a fallback from OpenAI to Anthropic to Ollama) and for
// backends chosen at run time from configuration. Copies share the backend.
#pragma once

#include <concepts>     // std::same_as
#include <memory>       // std::shared_ptr, std::make_shared
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::remove_cvref_t
#include <utility>      // std::move

#include <boost/asio/awaitable.hpp>  // net::awaitable

#include "llmgate/backend/backend.hpp"
#include "llmgate/backend/backend_error.hpp"

namespace llmgate::inline v0 {

namespace net = boost::asio;

class any_backend {
 public:
  template <Backend B>
    requires(!std::same_as<std::remove_cvref_t<B>, any_backend>)
  any_backend(B backend)  // NOLINT: implicit, so that {openai, anthropic} makes a list
      : self_(std::make_shared<holder<B>>(std::move(backend))) {}

  std::string_view name() const { return self_->name(); }

  net::awaitable<chat_response> complete(const chat_request& request) {
    auto self = self_;  // the backend lives until the call ends, even if this handle does not
    co_return co_await self->complete(request);
  }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    auto self = self_;
    co_return co_await self->stream(request, std::move(on_chunk));
  }

  /// Throws backend_error (status 501) when the backend cannot embed.
  net::awaitable<embedding_response> embed(const embedding_request& request) {
    auto self = self_;
    co_return co_await self->embed(request);
  }

 private:
  struct interface {
    virtual ~interface() = default;
    virtual std::string_view name() const = 0;
    virtual net::awaitable<chat_response> complete(const chat_request&) = 0;
    virtual net::awaitable<chat_response> stream(const chat_request&, chunk_handler) = 0;
    virtual net::awaitable<embedding_response> embed(const embedding_request&) = 0;
  };

  template <class B>
  struct holder final : interface {
    explicit holder(B b) : backend(std::move(b)) {}
    std::string_view name() const override { return backend.name(); }
    net::awaitable<chat_response> complete(const chat_request& request) override {
      return backend.complete(request);
    }
    net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) override {
      return backend.stream(request, std::move(on_chunk));
    }
    net::awaitable<embedding_response> embed(const embedding_request& request) override {
      if constexpr (EmbeddingBackend<B>) {
        return backend.embed(request);
      } else {
        return refuse(std::string(backend.name()));
      }
    }
    static net::awaitable<embedding_response> refuse(std::string name) {
      throw backend_error(errc::upstream_error, name + " does not serve embeddings",
                          {.backend = name, .status = 501});
      co_return embedding_response{};
    }
    B backend;
  };

  std::shared_ptr<interface> self_;
};

static_assert(Backend<any_backend>);
static_assert(EmbeddingBackend<any_backend>);

}  // namespace llmgate::inline v0
