// The AsyncEmbedder concept: text -> vector behind an await, so that an
// embedder that waits on the network (async_http_embedder) suspends the
// request that asked instead of blocking its io thread. The semantic cache
// stage awaits one between the cache's key() and search()
// (pipeline/semantic_cache_stage.hpp), holding nothing meanwhile.
//
// Models: async_http_embedder (an EmbeddingBackend's /embeddings, batched)
// and inline_embedder (any synchronous Embedder, run where it is awaited).
#pragma once

#include <concepts>      // std::convertible_to, std::same_as
#include <cstddef>       // std::size_t
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code
#include <vector>        // std::vector

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

namespace llmgate::inline v0 {

/// What an asynchronous embedding gives: the vector, or why there is none.
/// The failures to expect (the model server down, an error status, an
/// answer of the wrong length) are values here, not exceptions: a cache
/// treats them as a miss and the request goes on.
struct embedding_result {
  std::vector<float> vector;  ///< dimension() floats; empty on failure
  std::error_code error = {};  ///< errc::upstream_unreachable, upstream_error, dimension_mismatch...
  std::string message = {};    ///< on failure, what failed, in the words of the layer that saw it

  explicit operator bool() const noexcept { return !error; }
};

/// Turns text into a vector of dimension() floats, asynchronously.
/// - embed(text) completes with an embedding_result; the text need only
///   live until the await completes (embedders copy what they keep).
/// - Cancellation: like the backends, embed() honours Asio's per-operation
///   cancellation (terminal) of the awaiting coroutine and then throws
///   boost::system::system_error(operation_aborted). Nothing else throws
///   but allocation failures.
/// - embed may be awaited by many coroutines at once, on any threads.
/// - Vectors are for cosine similarity, like an Embedder's.
template <class E>
concept AsyncEmbedder = requires(E& e, const E& view, std::string_view text) {
  { view.dimension() } -> std::convertible_to<std::size_t>;
  { e.embed(text) } -> std::same_as<boost::asio::awaitable<embedding_result>>;
};

}  // namespace llmgate::inline v0
