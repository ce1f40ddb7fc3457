// external_embedder: the Embedder of a cache whose vectors always come
// from its caller, e.g. a gateway that embeds with an HTTP API
// asynchronously (so that no thread waits on the network while it holds
// anything) and then hands the vector to the cache's two-step lookup:
//   auto key = cache.key(scope, messages);
//   auto vector = looked_up_vector::of(key.text, (co_await remote.embed(key.text)).vector);
//   auto found = cache.search(key, std::move(vector));
//   ... on a miss: cache.insert(std::move(found), key, answer, cost);
// It only knows the dimension; it never embeds: embed() answers
// errc::not_supported at once. A text the cache is given no vector for
// (an insert without a lookup's vector) is stored but never found, as a
// text an embedder cannot embed.
#pragma once

#include <cstddef>       // std::size_t
#include <span>          // std::span
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code

#include "llmgate/embed/embedder.hpp"  // Embedder
#include "llmgate/error.hpp"           // errc::not_supported

namespace llmgate::inline v0 {

class external_embedder {
 public:
  /// `dimension`: floats per vector the caller provides.
  constexpr explicit external_embedder(std::size_t dimension = 0) noexcept : dimension_(dimension) {}

  constexpr std::size_t dimension() const noexcept { return dimension_; }

  /// Never embeds: the vectors come from the caller.
  [[nodiscard]] std::error_code embed(std::string_view, std::span<float>) const noexcept {
    return make_error_code(errc::not_supported);
  }

 private:
  std::size_t dimension_;
};

static_assert(Embedder<external_embedder>);

}  // namespace llmgate::inline v0
