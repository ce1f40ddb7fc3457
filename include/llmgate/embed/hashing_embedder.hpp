// hashing_embedder: llmgate's default embedder, which needs no model file.
//
// A text becomes a sparse bag of features, each hashed with a sign into one
// of D dimensions ("feature hashing"), weighted TF-IDF style and scaled to
// unit length:
//   - words, lightly stemmed (English inflections: "apples" meets "apple"),
//     and numbers exactly as written and weighted up, since "2 apples" and
//     "3 apples" must stay apart;
//   - the first token anchored at the start of the text: in a question, its
//     kind ("how can I ..." and "can I ..." ask different things);
//   - word bigrams, weighted low: they separate "A better than B" from "B
//     better than A" at the top of the similarity range, while full weight
//     would push real paraphrases (which reorder words) apart;
//   - character 3- to 5-grams of each word between boundary marks ("<ap",
//     "app", ..., "es>"), which survive typos, inflections and compounds;
//   - sublinear term frequency (1 + ln tf) and inverse document frequency
//     learned from traffic, which turns frequent words ("the", "is") down.
// The default weights were chosen on half of the QQP dev pairs and checked
// on the other half (bench/embedder_quality.cpp prints what each part
// brings).
//
// Keeping stored vectors comparable with new ones: document frequencies
// are counted by observe(), but embed() never reads those live counts. It
// reads an immutable IDF table published by refresh(), and each refresh
// starts a new generation(). Between two refreshes every vector is
// computed with the same weights, so a vector stored an hour ago and a
// query embedded now are comparable exactly when their generations match;
// a cache that sees the generation move re-embeds what it stores. Before
// the first refresh (generation 0) every IDF weight is 1. refresh_due()
// proposes a refresh when the documents observed first reach
// first_refresh (1,000) and then each time they double, so a cache that
// re-embeds everything at each refresh re-embeds at most about twice as
// many texts as it ever stored: amortised, a constant per request.
//
// Thread safety: embed() may run on any number of threads while others
// observe() and refresh(); observe() calls serialise on a mutex (so a
// given stream of calls gives the same counts, in any order of threads
// for the same set of calls). Deterministic: the same options and the same
// sequence of observe/refresh calls give bit-identical vectors on a given
// build (hashes are xxHash3, platform independent; the final scaling uses
// the SIMD kernels of the including translation unit).
//
// Cost: a short question takes about 5 to 10 microseconds, allocation-free
// after a thread's first calls (scratch memory is kept per thread). Memory:
// two tables of 2^frequency_table_bits 4-byte entries (2 MiB by default).
#pragma once

#include <algorithm>     // std::fill, std::max, std::min
#include <bit>           // std::bit_ceil
#include <cmath>         // std::log, std::isfinite
#include <cstdint>       // std::uint32_t, std::uint64_t
#include <filesystem>    // std::filesystem::path
#include <limits>        // std::numeric_limits
#include <memory>        // std::shared_ptr, std::make_shared
#include <mutex>         // std::mutex, std::lock_guard
#include <span>          // std::span
#include <stdexcept>     // std::invalid_argument
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code
#include <utility>       // std::move
#include <vector>        // std::vector

#include "llmgate/detail/xxhash.hpp"  // XXH3_64bits_withSeed
#include "llmgate/embed/embedder.hpp"
#include "llmgate/embed/stemmer.hpp"
#include "llmgate/embed/tokenizer.hpp"
#include "llmgate/error.hpp"
#include "llmgate/simd/kernels.hpp"
#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

/// What a hashing_embedder computes, and when it proposes a refresh. Every
/// field is saved with the embedder's state; vectors are comparable only
/// between embedders with equal options (the refresh schedule aside) and
/// equal learned state.
struct hashing_embedder_options {
  std::size_t dimension = 384;          ///< floats per vector
  unsigned frequency_table_bits = 18;   ///< 2^bits document-frequency counters
  float word_weight = 1.0f;             ///< a word (or ideograph, or symbol)
  float number_weight = 3.0f;           ///< a number: numbers decide answers
  float bigram_weight = 0.2f;           ///< two consecutive tokens: word order
  float first_word_weight = 1.0f;       ///< the first token as such: a question's kind ("how" / "can")
  float char_ngram_weight = 0.25f;      ///< each character n-gram of a word
  std::size_t char_ngram_min = 3;
  std::size_t char_ngram_max = 5;
  bool stem_english = true;             ///< Porter step 1 on ASCII words
  std::uint64_t first_refresh = 1000;   ///< refresh_due() first at this many documents; 0: never
  double refresh_growth = 2.0;          ///< ... then whenever they grow by this factor

  friend bool operator==(const hashing_embedder_options&, const hashing_embedder_options&) = default;
};

namespace detail {

struct hashed_feature {
  std::uint64_t hash;
  float weight;
  std::uint32_t count;  // occurrences in the text
};

// Per-thread working memory of the embedder, reused between calls.
struct hashing_scratch {
  token_list tokens;
  std::vector<hashed_feature> features;  // each feature once, in order of first occurrence
  std::vector<std::uint32_t> positions;  // open-addressing table: hash -> index in features
  std::vector<std::size_t> boundaries;   // where each code point of `padded` starts
  std::string stem;
  std::string padded;
};

inline hashing_scratch& thread_hashing_scratch() {
  thread_local hashing_scratch scratch;
  return scratch;
}

inline bool is_ascii(std::string_view text) noexcept {
  for (const char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

}  // namespace detail

class hashing_embedder {
 public:
  using options_type = hashing_embedder_options;

  /// IDF weights computed from what was observed; never changed once made.
  struct idf_table {
    std::uint64_t generation = 0;
    std::uint64_t documents = 0;  ///< observed when it was computed
    std::vector<float> idf;       ///< by slot of a feature's hash
  };
  /// One generation's weights; null is generation 0 (every feature weighs 1).
  using weights_type = std::shared_ptr<const idf_table>;

  /// Throws std::invalid_argument for options no embedder can work with.
  explicit hashing_embedder(options_type options = {}) : options_(validated(options)) {
    counts_.assign(std::size_t{1} << options_.frequency_table_bits, 0);
  }

  /// A moved-from embedder may only be destroyed.
  hashing_embedder(hashing_embedder&& other) noexcept
      : options_(other.options_),
        counts_(std::move(other.counts_)),
        documents_(other.documents_),
        published_(std::move(other.published_)) {}
  hashing_embedder& operator=(hashing_embedder&&) = delete;

  std::size_t dimension() const noexcept { return options_.dimension; }
  const options_type& options() const noexcept { return options_; }

  /// Writes the unit vector of `text` into `out` (dimension() floats, else
  /// errc::dimension_mismatch). A text without any token (empty, or only
  /// punctuation) still gets a unit vector, from its bytes as one feature.
  [[nodiscard]] std::error_code embed(std::string_view text, std::span<float> out) const {
    return embed(text, out, current_weights());
  }

  /// embed() with the given weights instead of the published ones: for
  /// an owner re-embedding what it stores under the next weights before
  /// publishing them, or one that must know which generation it used.
  [[nodiscard]] std::error_code embed(std::string_view text, std::span<float> out,
                                      const weights_type& weights) const {
    if (out.size() != options_.dimension) return make_error_code(errc::dimension_mismatch);

    auto& scratch = detail::thread_hashing_scratch();
    collect_features(text, scratch);
    std::fill(out.begin(), out.end(), 0.0f);
    for (const auto& f : scratch.features) {
      const float term_frequency = f.count == 1 ? 1.0f : 1.0f + std::log(static_cast<float>(f.count));
      const float idf = weights ? weights->idf[slot_of(f.hash)] : 1.0f;
      const float value = f.weight * term_frequency * idf;
      out[bucket_of(f.hash)] += (f.hash >> 32) & 1 ? -value : value;
    }
    simd::normalize(out.data(), out.size());
    return {};
  }

  /// Counts the features of one request towards the document frequencies.
  /// Call it once per distinct request (e.g. when a cache stores an
  /// answer); it takes effect at the next refresh().
  void observe(std::string_view text) {
    auto& scratch = detail::thread_hashing_scratch();
    collect_features(text, scratch);
    std::lock_guard lock(learning_mutex_);
    for (const auto& f : scratch.features) {  // each distinct feature once
      auto& count = counts_[slot_of(f.hash)];
      if (count != std::numeric_limits<std::uint32_t>::max()) ++count;
    }
    ++documents_;
  }

  /// Documents observed so far.
  std::uint64_t documents_observed() const {
    std::lock_guard lock(learning_mutex_);
    return documents_;
  }

  /// True when the documents observed have reached first_refresh, or grown
  /// by refresh_growth since the last refresh.
  bool refresh_due() const {
    if (options_.first_refresh == 0) return false;
    const auto weights = current_weights();
    const std::uint64_t last = weights ? weights->documents : 0;
    const double due = std::max(static_cast<double>(options_.first_refresh),
                                static_cast<double>(last) * options_.refresh_growth);
    std::lock_guard lock(learning_mutex_);
    return documents_ > last && static_cast<double>(documents_) >= due;
  }

  /// Computes weights from everything observed so far, as the next
  /// generation, without publishing them: embed(text, out, weights) uses
  /// them, embed(text, out) keeps the published ones until publish().
  weights_type next_weights() const {
    auto next = std::make_shared<idf_table>();
    {
      std::lock_guard lock(learning_mutex_);
      next->documents = documents_;
      next->idf.resize(counts_.size());
      // Smoothed IDF, 1 + ln((N + 1) / (df + 1)), never below 1: features
      // that share a counter can count more often than there are documents.
      const double documents = static_cast<double>(documents_) + 1.0;
      for (std::size_t slot = 0; slot < counts_.size(); ++slot)
        next->idf[slot] = static_cast<float>(1.0 + std::max(0.0, std::log(documents / (counts_[slot] + 1.0))));
    }
    next->generation = generation() + 1;
    return next;
  }

  /// Makes `weights` (from next_weights()) the ones embed() uses. Embeds
  /// already running finish with the weights they started with.
  void publish(weights_type weights) {
    std::lock_guard lock(publish_mutex_);
    published_ = std::move(weights);
  }

  /// next_weights() published at once; returns their generation.
  std::uint64_t refresh() {
    auto next = next_weights();
    const auto generation = next->generation;
    publish(std::move(next));
    return generation;
  }

  /// The weights embed() uses now.
  weights_type current_weights() const {
    std::lock_guard lock(publish_mutex_);
    return published_;
  }

  /// The generation of the weights embed() uses now: 0 before the first
  /// refresh, then one more at each refresh.
  std::uint64_t generation() const {
    const auto weights = current_weights();
    return weights ? weights->generation : 0;
  }

  /// Appends the options and the learned state (document frequencies and
  /// the published weights) to a snapshot, e.g. the semantic cache's.
  void save_to(store::snapshot_writer& out) const {
    const auto weights = current_weights();
    std::lock_guard lock(learning_mutex_);
    out.write(static_cast<std::uint64_t>(options_.dimension));
    out.write(static_cast<std::uint32_t>(options_.frequency_table_bits));
    out.write(options_.word_weight);
    out.write(options_.number_weight);
    out.write(options_.bigram_weight);
    out.write(options_.first_word_weight);
    out.write(options_.char_ngram_weight);
    out.write(static_cast<std::uint64_t>(options_.char_ngram_min));
    out.write(static_cast<std::uint64_t>(options_.char_ngram_max));
    out.write(static_cast<std::uint8_t>(options_.stem_english));
    out.write(options_.first_refresh);
    out.write(options_.refresh_growth);
    out.write(documents_);
    out.write_array(std::span<const std::uint32_t>(counts_));
    out.write(weights ? weights->generation : std::uint64_t{0});
    if (weights) {
      out.write(weights->documents);
      out.write_array(std::span<const float>(weights->idf));
    }
  }

  /// Reads what save_to() wrote. On content that cannot be right it marks
  /// `in` corrupt and returns an embedder with default options: check
  /// in.finish() before using anything read.
  static hashing_embedder load_from(store::snapshot_reader& in) {
    options_type options;
    options.dimension = in.read<std::uint64_t>();
    options.frequency_table_bits = in.read<std::uint32_t>();
    options.word_weight = in.read<float>();
    options.number_weight = in.read<float>();
    options.bigram_weight = in.read<float>();
    options.first_word_weight = in.read<float>();
    options.char_ngram_weight = in.read<float>();
    options.char_ngram_min = in.read<std::uint64_t>();
    options.char_ngram_max = in.read<std::uint64_t>();
    options.stem_english = in.read<std::uint8_t>() != 0;
    options.first_refresh = in.read<std::uint64_t>();
    options.refresh_growth = in.read<double>();
    if (!problem_with(options).empty()) {
      in.mark_corrupt();
      return hashing_embedder();
    }
    hashing_embedder embedder(options);
    const std::size_t slots = embedder.counts_.size();
    embedder.documents_ = in.read<std::uint64_t>();
    if (slots * sizeof(std::uint32_t) > in.remaining()) {
      in.mark_corrupt();
      return embedder;
    }
    in.read_array(std::span<std::uint32_t>(embedder.counts_));
    const auto generation = in.read<std::uint64_t>();
    if (generation > 0) {
      auto weights = std::make_shared<idf_table>();
      weights->generation = generation;
      weights->documents = in.read<std::uint64_t>();
      if (weights->documents > embedder.documents_ || slots * sizeof(float) > in.remaining()) {
        in.mark_corrupt();
        return embedder;
      }
      weights->idf.resize(slots);
      in.read_array(std::span<float>(weights->idf));
      for (const float w : weights->idf)
        if (!std::isfinite(w) || w < 1.0f) in.mark_corrupt();
      embedder.published_ = std::move(weights);
    }
    return embedder;
  }

  /// Writes the embedder to `path` atomically (new file, fsync, rename).
  [[nodiscard]] std::error_code save(const std::filesystem::path& path) const {
    store::snapshot_writer out(file_kind, file_version);
    save_to(out);
    return out.commit(path);
  }

  /// Reads an embedder saved by save(). Throws llmgate::error naming the
  /// file and the cause when it is missing, truncated, corrupt, of another
  /// kind or from a newer version.
  static hashing_embedder load(const std::filesystem::path& path) {
    std::error_code ec;
    store::snapshot_reader in(path, file_kind, file_version, ec);
    if (!ec) {
      auto embedder = load_from(in);
      ec = in.finish();
      if (!ec) return embedder;
    }
    throw store::load_failure("loading hashing_embedder from '" + path.string() + "'", path, ec);
  }

  static constexpr store::kind_tag file_kind = {'H', 'E', 'M', 'B'};
  static constexpr std::uint32_t file_version = 1;

 private:

  // Seeds that keep the kinds of features apart in hash space.
  static constexpr std::uint64_t word_seed = 0x9E3779B97F4A7C15ull;
  static constexpr std::uint64_t char_ngram_seed = 0xC2B2AE3D27D4EB4Full;
  static constexpr std::uint64_t featureless_seed = 0x165667B19E3779F9ull;
  static constexpr std::uint64_t text_start = 0x27D4EB2F165667C5ull;  // "token" before the first

  // Empty when the options are usable, else what is wrong with them.
  static std::string problem_with(const options_type& o) {
    if (o.dimension == 0 || o.dimension > (1u << 20)) return "dimension must be in [1, 2^20]";
    if (o.frequency_table_bits < 8 || o.frequency_table_bits > 28)
      return "frequency_table_bits must be in [8, 28]";
    for (const float w : {o.word_weight, o.number_weight, o.bigram_weight, o.first_word_weight, o.char_ngram_weight})
      if (!std::isfinite(w) || w < 0.0f) return "feature weights must be finite and not negative";
    if (o.char_ngram_min < 1 || o.char_ngram_min > o.char_ngram_max || o.char_ngram_max > 32)
      return "character n-grams need 1 <= char_ngram_min <= char_ngram_max <= 32";
    if (o.first_refresh > 0 && !(o.refresh_growth > 1.0 && std::isfinite(o.refresh_growth)))
      return "refresh_growth must be finite and greater than 1";
    return {};
  }

  static const options_type& validated(const options_type& options) {
    if (const auto problem = problem_with(options); !problem.empty())
      throw std::invalid_argument("hashing_embedder: " + problem);
    return options;
  }

  // A hash's three independent parts: its dimension (low 32 bits, by
  // multiply-shift), its sign (bit 32) and its IDF slot (the top bits).
  std::size_t bucket_of(std::uint64_t hash) const noexcept {
    return static_cast<std::size_t>(((hash & 0xFFFFFFFFull) * options_.dimension) >> 32);
  }
  std::uint32_t slot_of(std::uint64_t hash) const noexcept {
    return static_cast<std::uint32_t>(hash >> (64 - options_.frequency_table_bits));
  }

  static std::uint64_t hash(std::string_view bytes, std::uint64_t seed) noexcept {
    return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
  }

  // Fills scratch.features with the features of `text`, each once with its
  // number of occurrences, in the order they first occur (which fixes the
  // order of the float sums, so vectors are reproducible).
  void collect_features(std::string_view text, detail::hashing_scratch& scratch) const {
    auto& features = scratch.features;
    features.clear();
    tokenize(text, scratch.tokens);
    std::uint64_t previous = text_start;
    for (std::size_t i = 0; i < scratch.tokens.size(); ++i) {
      const token t = scratch.tokens[i];
      std::string_view key = t.text;
      if (options_.stem_english && t.kind == token_kind::word && detail::is_ascii(key)) {
        scratch.stem.assign(key);
        stem_english_suffixes(scratch.stem);
        key = scratch.stem;
      }
      const std::uint64_t unigram = hash(key, word_seed);
      features.push_back({unigram, t.kind == token_kind::number ? options_.number_weight : options_.word_weight, 1});
      // A bigram is the token hashed with its predecessor's hash as seed.
      features.push_back({hash(key, previous), i == 0 ? options_.first_word_weight : options_.bigram_weight, 1});
      previous = unigram;
      if (t.kind == token_kind::word && options_.char_ngram_weight != 0.0f) add_char_ngrams(t.text, scratch);
    }
    std::erase_if(features, [](const detail::hashed_feature& f) { return f.weight == 0.0f; });
    if (features.empty()) features.push_back({hash(text, featureless_seed), 1.0f, 1});
    merge_repeats(scratch);
  }

  // Folds repeated features into one with a count, through a small
  // open-addressing table (a sort would cost several times more).
  static void merge_repeats(detail::hashing_scratch& scratch) {
    auto& features = scratch.features;
    auto& positions = scratch.positions;
    constexpr std::uint32_t empty = std::numeric_limits<std::uint32_t>::max();
    const std::size_t size = std::bit_ceil(2 * features.size());
    positions.assign(size, empty);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < features.size(); ++i) {
      std::size_t at = features[i].hash & (size - 1);
      while (positions[at] != empty && features[positions[at]].hash != features[i].hash) at = (at + 1) & (size - 1);
      if (positions[at] == empty) {
        positions[at] = static_cast<std::uint32_t>(kept);
        features[kept++] = features[i];
      } else {
        ++features[positions[at]].count;
      }
    }
    features.resize(kept);
  }

  // The character n-grams of "<word>"; none for a one-letter word, whose
  // unigram says it all.
  void add_char_ngrams(std::string_view word, detail::hashing_scratch& scratch) const {
    auto& padded = scratch.padded;
    padded.assign("<").append(word).append(">");
    auto& starts = scratch.boundaries;
    starts.clear();
    for (std::size_t i = 0; i < padded.size(); ++i)
      if ((static_cast<unsigned char>(padded[i]) & 0xC0) != 0x80) starts.push_back(i);  // not a continuation byte
    const std::size_t characters = starts.size();
    if (characters < 4) return;
    starts.push_back(padded.size());
    const std::string_view view(padded);
    for (std::size_t n = options_.char_ngram_min; n <= std::min(options_.char_ngram_max, characters); ++n)
      for (std::size_t first = 0; first + n <= characters; ++first)
        scratch.features.push_back({hash(view.substr(starts[first], starts[first + n] - starts[first]),
                                         char_ngram_seed),
                                    options_.char_ngram_weight, 1});
  }

  options_type options_;
  std::vector<std::uint32_t> counts_;  // document frequency by slot, guarded by learning_mutex_
  std::uint64_t documents_ = 0;        // guarded by learning_mutex_
  std::shared_ptr<const idf_table> published_;  // guarded by publish_mutex_; null: generation 0
  mutable std::mutex learning_mutex_;
  mutable std::mutex publish_mutex_;
};

static_assert(LearningEmbedder<hashing_embedder> && PersistentEmbedder<hashing_embedder>);

}  // namespace llmgate::inline v0
