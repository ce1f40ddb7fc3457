// prompt_featurizer: what the router's predictors read of a request, as a
// feature row (learn/feature_row.hpp):
//   [0, D)          its text as hashing_embedder sees it (word, bigram and
//                   character n-gram features, TF-IDF weighted, unit
//                   length), of its first and last edge_words words when
//                   it is longer (text_features.hpp's prune_request);
//   [D, D + 16)     its length, one-hot by log2 of its bytes (the last
//                   slot: 16 KiB and longer);
//   [D + 16, ...)   its task label when one is given, hashed one-hot into
//                   task_buckets (RouterBench's eval_name, a caller's tag).
// The IDF is learned from the texts of the labelled requests (learn()).
#pragma once

#include <algorithm>    // std::min
#include <bit>          // std::bit_width
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t
#include <memory>       // std::unique_ptr, std::make_unique
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/detail/xxhash.hpp"           // XXH3_64bits
#include "llmgate/embed/hashing_embedder.hpp"  // hashing_embedder
#include "llmgate/learn/feature_row.hpp"
#include "llmgate/route/text_features.hpp"     // prune_request

namespace llmgate::inline v0 {

struct prompt_featurizer_options {
  /// 4,096 dimensions: fewer lose words to collisions (`route_eval --folds 5 --predictor-dimension D`).
  hashing_embedder_options text{.dimension = 4096, .char_ngram_max = 3};
  std::size_t edge_words = 32;    ///< a longer request is read by its first and last this many words
  std::size_t task_buckets = 64;  ///< one-hot slots the task labels hash into
};

class prompt_featurizer {
 public:
  static constexpr std::size_t length_buckets = 16;

  explicit prompt_featurizer(const prompt_featurizer_options& options = {})
      : options_(options), embedder_(std::make_unique<hashing_embedder>(options.text)) {}

  /// Learns the IDF from `texts` (each a labelled request).
  void learn(std::span<const std::string> texts) {
    for (const auto& text : texts) embedder_->observe(prune_request(text, options_.edge_words, 0));
    embedder_->refresh();
  }

  std::size_t dimension() const noexcept { return options_.text.dimension + length_buckets + options_.task_buckets; }

  feature_row features(std::string_view text, std::string_view task) const {
    const std::size_t d = options_.text.dimension;
    std::vector<float> vector(d);
    (void)embedder_->embed(prune_request(text, options_.edge_words, 0), vector);  // the size is right
    feature_row row;
    for (std::size_t i = 0; i < d; ++i)
      if (vector[i] != 0) row.add(static_cast<std::uint32_t>(i), vector[i]);
    const std::size_t length_bucket = std::min<std::size_t>(std::bit_width(text.size()), length_buckets - 1);
    row.add(static_cast<std::uint32_t>(d + length_bucket), 1.0f);
    if (!task.empty())
      row.add(static_cast<std::uint32_t>(d + length_buckets + XXH3_64bits(task.data(), task.size()) % options_.task_buckets),
              1.0f);
    return row;
  }

 private:
  prompt_featurizer_options options_;
  std::unique_ptr<hashing_embedder> embedder_;  // not movable by assignment
};

}  // namespace llmgate::inline v0
