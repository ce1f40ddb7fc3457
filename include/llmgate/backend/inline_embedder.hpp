// inline_embedder: any synchronous Embedder (embed/embedder.hpp) as an
// AsyncEmbedder. embed() runs the embedder right where it is awaited and
// completes without suspending, so it is as cheap as the embedder itself,
// and exactly as blocking: a slow synchronous embedder (the blocking
// http_embedder) occupies the io thread that awaits it for the whole call,
// and every other request on that thread waits. Use it for in-process
// embedders (hashing_embedder, a local model); use async_http_embedder for
// one behind the network.
#pragma once

#include <cstddef>      // std::size_t
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::declval
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/backend/async_embedder.hpp"  // AsyncEmbedder, embedding_result
#include "llmgate/embed/embedder.hpp"          // Embedder

namespace llmgate::inline v0 {

/// E is kept by value; a learning embedder (hashing_embedder) copied here
/// learns apart from the cache's own, so give the cache's embedder to the
/// cache stage instead (semantic_cache_stage(cache) embeds through it).
template <Embedder E>
class inline_embedder {
 public:
  explicit inline_embedder(E embedder = E()) : embedder_(std::move(embedder)) {}

  std::size_t dimension() const noexcept(noexcept(std::declval<const E&>().dimension())) {
    return embedder_.dimension();
  }

  /// Never suspends, so there is nothing to cancel.
  boost::asio::awaitable<embedding_result> embed(std::string_view text) const {
    embedding_result result{.vector = std::vector<float>(embedder_.dimension())};
    if (const auto failed = embedder_.embed(text, result.vector)) {
      result.vector.clear();
      result.error = failed;
      result.message = failed.message();
    }
    co_return result;
  }

  const E& embedder() const noexcept { return embedder_; }

 private:
  E embedder_;
};

}  // namespace llmgate::inline v0
