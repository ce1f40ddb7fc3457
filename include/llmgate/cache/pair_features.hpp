// pair_featurizer: what a learned verifier knows of two requests, as a
// fixed list of numbers computed from the two texts alone.
//
// The embedder's similarity says how much two texts share overall; the
// features say what kind of difference is left: which words only one side
// has and how rare they are (an unshared "Java" outweighs an unshared
// "the"), whether the two ask the same kind of question ("how can I" /
// "can I"), whether numbers, negation or the order of things named differ
// (lexical_guard's checks), whether the named things (capitalised words,
// model numbers) agree, and overlaps at the levels of words (by stem, so
// "apples" meets "apple"), tokens as written, pairs of words and character
// n-grams, which survive typos. These are the text-pair features known to
// work on Quora Question Pairs; none depends on how often a question was
// seen. Word pairs and character n-grams are kept as 2048-bit sets, whose
// AND and OR count shared and all n-grams (two n-grams of short texts
// rarely share a bit).
//
// Cost: prepare() tokenizes and hashes a text once (it allocates; the
// overload that fills a prepared_text reuses its memory); features() only
// merges sorted hash lists and counts bits, allocation-free. The verifier
// bench (scripts/bench verifier) measures both per candidate.
#pragma once

#include <algorithm>    // std::sort, std::unique, std::find, std::binary_search, std::min, std::max
#include <array>        // std::array
#include <bit>          // std::popcount, std::bit_ceil, std::rotl
#include <cassert>      // assert
#include <cmath>        // std::log, std::log1p, std::sqrt, std::isfinite
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::tuple
#include <utility>      // std::pair, std::move, std::swap
#include <vector>       // std::vector

#include "llmgate/cache/guard.hpp"          // lexical_guard, veto_reason
#include "llmgate/detail/xxhash.hpp"        // XXH3_64bits_withSeed
#include "llmgate/embed/stemmer.hpp"        // stem_english_suffixes
#include "llmgate/embed/tokenizer.hpp"      // tokenize, token_list, token_kind
#include "llmgate/embed/unicode.hpp"        // unicode::decode_utf8, classify, simple_case_fold
#include "llmgate/store/snapshot_file.hpp"  // store::snapshot_writer, store::snapshot_reader

namespace llmgate::inline v0 {

namespace detail {

inline constexpr std::uint64_t pair_word_seed = 0x51ED270B27D4EB2Full;
inline constexpr std::uint64_t pair_entity_seed = 0x2545F4914F6CDD1Dull;

/// The hash of one case-folded token, as word_idf and the features key words.
inline std::uint64_t pair_word_hash(std::string_view folded) noexcept {
  return XXH3_64bits_withSeed(folded.data(), folded.size(), pair_word_seed);
}

/// The key of a token's stem: `hash` (its pair_word_hash) unless it is an
/// ASCII word that loses an English inflection ("apples" -> "apple").
inline std::uint64_t pair_stem_hash(token t, std::uint64_t hash, std::string& scratch) {
  // stem_english_suffixes changes only words that end in -s, -ed, -ing or -y.
  if (t.kind != token_kind::word || t.text.empty()) return hash;
  if (const char last = t.text.back(); last != 's' && last != 'd' && last != 'g' && last != 'y') return hash;
  for (const char c : t.text)
    if (static_cast<unsigned char>(c) >= 0x80) return hash;
  scratch.assign(t.text);
  stem_english_suffixes(scratch);
  return scratch == t.text ? hash : pair_word_hash(scratch);
}

// A 64-bit finaliser (MurmurHash3's), for combining hashes and short n-grams.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  return x ^ (x >> 33);
}

// Sorts a short list by insertion (no branchy partitioning), a long one by std::sort.
inline void sort_hashes(std::vector<std::uint64_t>& values) noexcept {
  if (values.size() > 32) {
    std::sort(values.begin(), values.end());
    return;
  }
  for (std::size_t i = 1; i < values.size(); ++i) {
    const std::uint64_t v = values[i];
    std::size_t j = i;
    for (; j > 0 && values[j - 1] > v; --j) values[j] = values[j - 1];
    values[j] = v;
  }
}

// Sorts and removes repeats.
inline void sort_unique(std::vector<std::uint64_t>& values) {
  sort_hashes(values);
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

// How many values two sorted lists share (a value repeated counts as often as both have it).
inline std::size_t shared_count(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b) noexcept {
  std::size_t i = 0, j = 0, shared = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++shared, ++i, ++j;
    }
  }
  return shared;
}

// part / whole, and `if_none` where whole is 0 (two empty sets agree fully).
inline float share(double part, double whole, float if_none = 1.0f) noexcept {
  return whole > 0 ? static_cast<float>(part / whole) : if_none;
}

// English words that carry little of a question's subject.
inline constexpr std::array<std::string_view, 64> stop_words = {
    "a",    "an",   "the",   "of",    "to",   "in",   "on",    "at",   "for",  "by",    "with",  "from", "and",
    "or",   "but",  "if",    "as",    "is",   "are",  "was",   "were", "be",   "been",  "being", "do",   "does",
    "did",  "i",    "me",    "my",    "you",  "your", "we",    "our",  "it",   "its",   "this",  "that", "these",
    "those", "he",  "she",   "they",  "them", "their", "his",  "her",  "what", "which", "who",   "how",  "why",
    "when", "where", "can",  "could", "should", "would", "will", "there", "about", "some"};

// Words that say what kind of question a text asks; a bit each.
inline constexpr std::array<std::string_view, 16> question_words = {
    "what", "how", "why", "which", "who", "when", "where", "can",
    "is",   "are", "should", "does", "do", "will", "could", "would"};

// What the lists above and lexical_guard's say of one word.
struct listed_word {
  std::uint64_t hash = 0;
  bool stop = false, negation = false, order = false;
  std::int8_t question = -1;  // index in question_words
};

// Every listed word once, in an open-addressing table by hash: about one
// probe per token instead of a string comparison per list entry; inlined,
// as prepare() calls it once or twice a token.
[[gnu::always_inline]] inline const listed_word* find_listed(std::uint64_t hash) noexcept {
  constexpr std::size_t size = 512;
  static const auto table = [] {
    std::array<listed_word, size> slots{};
    const auto entry = [&](std::uint64_t h) -> listed_word& {
      std::size_t at = h % size;
      while (slots[at].hash != 0 && slots[at].hash != h) at = (at + 1) % size;
      slots[at].hash = h;
      return slots[at];
    };
    // A function word's stem too ("does" -> "doe"): words are weighed by stem.
    std::string scratch;
    for (const auto w : stop_words) {
      const std::uint64_t h = pair_word_hash(w);
      entry(h).stop = entry(pair_stem_hash({w, token_kind::word}, h, scratch)).stop = true;
    }
    for (const auto w : lexical_guard::negation_words) entry(pair_word_hash(w)).negation = true;
    for (const auto w : lexical_guard::order_words) entry(pair_word_hash(w)).order = true;
    for (std::size_t q = 0; q < question_words.size(); ++q)
      entry(pair_word_hash(question_words[q])).question = static_cast<std::int8_t>(q);
    return slots;
  }();
  for (std::size_t at = hash % size;; at = (at + 1) % size) {
    if (table[at].hash == hash) return &table[at];
    if (table[at].hash == 0) return nullptr;
  }
}

}  // namespace detail

/// Inverse document frequency of words (by detail::pair_stem_hash of the
/// case-folded token: every token but symbols, English inflections
/// stripped), fitted on training texts as scikit-learn's smooth
/// IDF: ln((1 + n) / (1 + df)) + 1 for a word found in df of n texts. A
/// default-constructed one has n = 0 and so weighs every word 1.
class word_idf {
 public:
  word_idf() = default;

  /// Counts in how many of `texts` each word occurs.
  static word_idf fit(std::span<const std::string> texts) {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> counted;  // (hash, 1) per word per text
    token_list tokens;
    std::vector<std::uint64_t> words;
    std::string scratch;
    for (const auto& text : texts) {
      tokenize(text, tokens);
      words.clear();
      for (std::size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i].kind != token_kind::symbol)
          words.push_back(detail::pair_stem_hash(tokens[i], detail::pair_word_hash(tokens[i].text), scratch));
      detail::sort_unique(words);
      for (const auto w : words) counted.emplace_back(w, 1);
    }
    std::sort(counted.begin(), counted.end());
    std::vector<std::pair<std::uint64_t, std::uint32_t>> frequencies;
    for (const auto& [hash, one] : counted) {
      if (!frequencies.empty() && frequencies.back().first == hash) {
        ++frequencies.back().second;
      } else {
        frequencies.emplace_back(hash, one);
      }
    }
    word_idf idf;
    idf.documents_ = texts.size();
    idf.build(frequencies);
    return idf;
  }

  /// The IDF of a word; unseen words get that of df = 0.
  float of(std::uint64_t word_hash) const noexcept {
    if (!slots_.empty()) {
      const std::uint64_t key = word_hash == 0 ? 1 : word_hash;
      for (std::size_t at = slot_of(key);; at = (at + 1) & (slots_.size() - 1)) {
        if (slots_[at].key == key) return slots_[at].idf;
        if (slots_[at].key == 0) break;
      }
    }
    return unseen_;
  }

  /// Starts loading where of(word_hash) will look, for a caller that
  /// knows its words a little before it needs their weights.
  /// Always inlined: GCC otherwise finds the function free of effects
  /// and drops its calls, prefetch and all.
  [[gnu::always_inline]] void prefetch(std::uint64_t word_hash) const noexcept {
    if (!slots_.empty()) __builtin_prefetch(&slots_[slot_of(word_hash == 0 ? 1 : word_hash)]);
  }

  /// Texts fitted on, and distinct words seen.
  std::uint64_t documents() const noexcept { return documents_; }
  std::size_t words() const noexcept { return words_; }

  /// Appends the document count and each word's hash and document
  /// frequency, in order of hash (so equal fits give equal bytes).
  void save_to(store::snapshot_writer& out) const {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> frequencies;
    frequencies.reserve(words_);
    for (const auto& entry : slots_)
      if (entry.key != 0) frequencies.emplace_back(entry.key, entry.df);
    std::sort(frequencies.begin(), frequencies.end());
    out.write(documents_);
    out.write(static_cast<std::uint64_t>(frequencies.size()));
    for (const auto& [hash, df] : frequencies) {
      out.write(hash);
      out.write(df);
    }
  }

  /// Reads what save_to() wrote. On content that cannot be right (more
  /// words than bytes left, a frequency of 0 or above the document count,
  /// hashes out of order) it marks `in` corrupt and returns an empty
  /// word_idf: check in.finish() before using what was read.
  static word_idf load_from(store::snapshot_reader& in) {
    const auto documents = in.read<std::uint64_t>();
    const auto count = in.read<std::uint64_t>();
    constexpr std::size_t entry_bytes = sizeof(std::uint64_t) + sizeof(std::uint32_t);
    if (count > in.remaining() / entry_bytes) {
      in.mark_corrupt();
      return {};
    }
    std::vector<std::pair<std::uint64_t, std::uint32_t>> frequencies(static_cast<std::size_t>(count));
    for (auto& [hash, df] : frequencies) {
      hash = in.read<std::uint64_t>();
      df = in.read<std::uint32_t>();
    }
    for (std::size_t i = 0; i < frequencies.size(); ++i) {
      const auto& [hash, df] = frequencies[i];
      if (df == 0 || df > documents || hash == 0 || (i > 0 && frequencies[i - 1].first >= hash)) {
        in.mark_corrupt();
        return {};
      }
    }
    word_idf idf;
    idf.documents_ = documents;
    idf.build(frequencies);
    return idf;
  }

 private:
  float idf_of(std::uint64_t df) const noexcept {
    return static_cast<float>(std::log((1.0 + static_cast<double>(documents_)) / (1.0 + static_cast<double>(df))) +
                              1.0);
  }

  std::size_t slot_of(std::uint64_t key) const noexcept { return detail::mix64(key) & (slots_.size() - 1); }

  // An open-addressing table at most half full: one probe or two per word.
  void build(std::span<const std::pair<std::uint64_t, std::uint32_t>> frequencies) {
    unseen_ = idf_of(0);
    words_ = frequencies.size();
    if (frequencies.empty()) return;
    const std::size_t capacity = std::bit_ceil(2 * frequencies.size());
    slots_.assign(capacity, slot{});
    for (const auto& [hash, df] : frequencies) {
      const std::uint64_t key = hash == 0 ? 1 : hash;
      std::size_t at = slot_of(key);
      while (slots_[at].key != 0) at = (at + 1) & (capacity - 1);
      slots_[at] = {key, idf_of(df), df};
    }
  }

  std::uint64_t documents_ = 0;
  std::size_t words_ = 0;
  float unseen_ = 1.0f;
  // A word's hash, weight and count in 16 bytes: one cache line a lookup.
  struct slot {
    std::uint64_t key = 0;  // 0: empty (a hash of 0 is stored as 1)
    float idf = 0;
    std::uint32_t df = 0;
  };
  std::vector<slot> slots_;
};

/// A text as the pair features need it, made once per text by
/// pair_featurizer::prepare(). Fields are filled together; read them, do
/// not edit them.
struct prepared_text {
  /// One distinct stem of a token (not a symbol): its hash, weight and count.
  struct word {
    std::uint64_t hash;
    float idf;
    std::uint16_t count;
    bool stop;  ///< an English function word
  };
  static constexpr std::size_t ngram_bits = 2048;
  using ngram_set = std::array<std::uint64_t, ngram_bits / 64>;

  token_list tokens;                        ///< for guard_veto()
  std::vector<std::uint64_t> sequence;      ///< each token but symbols, in order (lexical_guard's words)
  std::uint64_t sequence_sum = 0;           ///< sum of mix64 of the sequence: equal for equal multisets
  std::vector<word> words;                  ///< distinct stems, by hash
  std::vector<std::uint64_t> stems;         ///< each token's stem (English inflections stripped), sorted
  std::vector<std::uint64_t> numbers;       ///< number tokens, in order
  std::uint64_t numbers_sum = 0;            ///< the same of the numbers
  std::vector<std::uint64_t> entities;      ///< distinct named-thing tokens, sorted
  ngram_set token_set{};                    ///< the sequence's distinct tokens, as a bit set
  ngram_set bigrams{};                      ///< pairs of consecutive stems, as a bit set
  ngram_set char3{}, char5{};               ///< 3- and 5-byte n-grams of the folded tokens joined by spaces
  std::uint32_t token_count = 0, bigram_count = 0, char3_count = 0, char5_count = 0;  ///< bits set
  std::uint32_t characters = 0;             ///< code points of the folded tokens joined by spaces
  float idf_sum = 0;                        ///< over distinct words
  float tfidf_norm2 = 0;                    ///< squared length of the TF-IDF vector
  std::uint16_t question_words = 0;         ///< a bit per detail::question_words found
  std::int8_t first_question_word = -1;     ///< index of the first found, -1 for none
  std::uint8_t negation_parity = 0;         ///< lexical_guard's negation count, modulo 2
  bool order_word = false;                  ///< lexical_guard's order words: one is present
};

/// Turns a pair of texts (and the embedder's similarity of the two) into
/// feature_count numbers for a verifier model; feature_names says what
/// each is. The words' weights come from the word_idf it is given.
class pair_featurizer {
 public:
  static constexpr std::size_t feature_count = 52;
  static constexpr std::uint32_t feature_set_version = 2;
  static constexpr std::array<std::string_view, feature_count> feature_names = {
      "similarity",            // the embedder's cosine
      "word_jaccard",          // distinct words (by stem): shared / all
      "word_overlap_min",      // shared / the smaller side's
      "word_overlap_max",      // shared / the larger side's
      "token_jaccard",         // distinct tokens as written (not stemmed)
      "content_jaccard",       // words that are not English function words
      "content_overlap_min",
      "idf_shared_share",      // IDF mass shared / IDF mass of both
      "idf_shared_max",        // the rarest word both have
      "idf_shared_mass",       // IDF mass of the words both have
      "shared_content",        // how many of them are not English function words
      "idf_unshared_mass",     // IDF mass of the words only one side has
      "idf_unshared_mass_min", // ... on the side with less of it
      "idf_unshared_max",      // the rarest of those
      "idf_unshared_max_min",  // ... on the side whose rarest is less rare
      "unshared_words",        // how many words only one side has
      "unshared_words_min",    // ... on the side with fewer of them
      "unshared_content",      // how many of them are not English function words
      "tfidf_cosine",
      "idf_mean",              // how rare the words are: specific questions
      "bigram_jaccard",        // consecutive stems
      "bigram_overlap_min",
      "char3_jaccard",
      "char3_overlap_min",
      "char5_jaccard",
      "char5_overlap_min",
      "words_ratio",           // shorter / longer, in tokens
      "words_difference",      // ln(1 + |difference|)
      "chars_ratio",
      "chars_difference",      // ln(1 + |difference|)
      "words_total",           // ln(1 + both lengths)
      "first_word_equal",
      "first_two_equal",       // "how do" / "how can"
      "last_word_equal",
      "question_words_equal",  // the same set of what/how/why/can/is...
      "question_words_one_side",
      "first_question_word_equal",
      "first_question_word_min",  // which question words lead (index in detail::question_words,
      "first_question_word_max",  // -1 for none): "how" / "what" ask differently
      "lcs_words_ratio",       // longest common subsequence / the longer
      "common_run_ratio",      // longest common run of tokens / the shorter
      "reordered",             // shared tokens out of the common order / shared tokens
      "prefix_ratio",          // common leading tokens / the shorter
      "suffix_ratio",          // common trailing tokens / the shorter
      "numbers_equal",         // both have numbers, the same ones
      "numbers_differ",        // both have numbers, not the same
      "numbers_one_side",
      "negation_differs",      // lexical_guard's checks
      "order_swapped",
      "guard_vetoes",
      "entities_shared",       // capitalised words, words with digits
      "entities_unshared",
  };

  explicit pair_featurizer(word_idf idf = {}) : idf_(std::move(idf)) {}

  prepared_text prepare(std::string_view text) const {
    prepared_text out;
    prepare(text, out);
    return out;
  }

  /// Fills `out` with what the features need of `text`, reusing its memory.
  void prepare(std::string_view text, prepared_text& out) const {
    tokenize(text, out.tokens);
    const token_list& tokens = out.tokens;
    out.sequence.clear();
    out.numbers.clear();
    out.stems.clear();
    out.bigrams.fill(0);
    out.token_set.fill(0);
    out.words.clear();
    out.question_words = 0;
    out.first_question_word = -1;
    out.order_word = false;
    out.char3.fill(0);
    out.char5.fill(0);

    int negations = 0;
    // Kept per thread: a long inflected word reuses its memory instead of allocating.
    thread_local std::string stem;
    std::uint64_t previous_stem = 0;
    std::uint64_t window = 0;  // the last bytes of the folded text, for the character n-grams
    std::size_t window_bytes = 0;
    std::uint32_t characters = 0;
    out.sequence_sum = out.numbers_sum = 0;
    const auto add_byte = [&](unsigned char byte) {
      window = (window << 8) | byte;
      ++window_bytes;
      if (window_bytes >= 3) set_bit(out.char3, (window & 0xFFFFFFull) * 0x9E3779B97F4A7C15ull);
      if (window_bytes >= 5) set_bit(out.char5, (window & 0xFFFFFFFFFFull) * 0xC2B2AE3D27D4EB4Full);
    };
    add_byte(' ');
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const token t = tokens[i];
      const std::uint64_t hash = detail::pair_word_hash(t.text);
      const detail::listed_word* listed = detail::find_listed(hash);
      if (listed && listed->order) out.order_word = true;
      if (t.kind == token_kind::symbol) continue;
      out.sequence.push_back(hash);
      // One mix of the hash serves the token set and both multiset sums.
      const std::uint64_t mixed = detail::mix64(hash);
      set_bit(out.token_set, mixed);
      out.sequence_sum += mixed;
      if (t.kind == token_kind::number) {
        out.numbers.push_back(hash);
        out.numbers_sum += mixed;
      }
      if (listed && t.kind == token_kind::word) {
        negations += listed->negation;
        if (listed->question >= 0) {
          out.question_words |= static_cast<std::uint16_t>(1u << listed->question);
          if (out.first_question_word < 0) out.first_question_word = listed->question;
        }
      }
      const std::uint64_t stem_hash = detail::pair_stem_hash(t, hash, stem);
      idf_.prefetch(stem_hash);
      out.stems.push_back(stem_hash);
      if (out.sequence.size() > 1) set_bit(out.bigrams, detail::mix64(std::rotl(previous_stem, 17) ^ stem_hash));
      previous_stem = stem_hash;
      for (const char c : t.text) {
        add_byte(static_cast<unsigned char>(c));
        characters += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      }
      add_byte(' ');
      ++characters;
    }
    out.characters = characters > 0 ? characters - 1 : 0;  // spaces between tokens only
    out.negation_parity = static_cast<std::uint8_t>(negations % 2);

    // Distinct stems with their counts and weights.
    detail::sort_hashes(out.stems);
    const auto& hashes = out.stems;
    out.idf_sum = 0;
    double norm2 = 0;
    for (std::size_t i = 0; i < hashes.size();) {
      std::size_t j = i;
      while (j < hashes.size() && hashes[j] == hashes[i]) ++j;
      const float idf = idf_.of(hashes[i]);
      const auto count = static_cast<std::uint16_t>(std::min<std::size_t>(j - i, 65535));
      const detail::listed_word* listed = detail::find_listed(hashes[i]);
      out.words.push_back({hashes[i], idf, count, listed && listed->stop});
      out.idf_sum += idf;
      norm2 += static_cast<double>(count) * count * idf * idf;
      i = j;
    }
    out.tfidf_norm2 = static_cast<float>(norm2);

    out.token_count = popcount(out.token_set);
    out.bigram_count = popcount(out.bigrams);
    out.char3_count = popcount(out.char3);
    out.char5_count = popcount(out.char5);
    collect_entities(text, out.entities);
  }

  /// The features of (request, stored), `similarity` being the embedder's
  /// cosine of the two. Every feature is symmetric: swapping the texts
  /// gives the same numbers.
  void features(const prepared_text& a, const prepared_text& b, float similarity,
                std::span<float, feature_count> out) const noexcept {
    using detail::share;
    std::size_t k = 0;
    const auto put = [&](double value) { out[k++] = static_cast<float>(value); };
    put(similarity);

    // One merge of the distinct tokens gives every word-level count and
    // mass; `only[0]` is about the words only `a` has, `only[1]` `b`.
    struct unshared {
      std::size_t words = 0, content = 0;
      double idf = 0, idf_max = 0;
      void add(const prepared_text::word& w) noexcept {
        ++words;
        content += !w.stop;
        idf += w.idf;
        idf_max = std::max<double>(idf_max, w.idf);
      }
    };
    std::array<unshared, 2> only;
    std::size_t shared = 0, content_shared = 0;
    float idf_shared = 0;  // summed as idf_sum is, so that equal texts share all of it exactly
    double idf_shared_max = 0, dot = 0;
    {
      std::size_t i = 0, j = 0;
      const auto& wa = a.words;
      const auto& wb = b.words;
      while (i < wa.size() || j < wb.size()) {
        if (j == wb.size() || (i < wa.size() && wa[i].hash < wb[j].hash)) {
          only[0].add(wa[i++]);
        } else if (i == wa.size() || wb[j].hash < wa[i].hash) {
          only[1].add(wb[j++]);
        } else {
          ++shared;
          content_shared += !wa[i].stop;
          idf_shared += wa[i].idf;
          idf_shared_max = std::max<double>(idf_shared_max, wa[i].idf);
          dot += static_cast<double>(wa[i].count) * wb[j].count * wa[i].idf * wa[i].idf;
          ++i, ++j;
        }
      }
    }
    const std::size_t words_a = a.words.size(), words_b = b.words.size();
    const std::size_t content_a = only[0].content + content_shared, content_b = only[1].content + content_shared;
    put(share(shared, words_a + words_b - shared));
    put(share(shared, std::min(words_a, words_b), words_a == words_b ? 1.0f : 0.0f));
    put(share(shared, std::max(words_a, words_b)));
    const std::size_t tokens_shared = shared_bits(a.token_set, b.token_set);
    put(share(tokens_shared, a.token_count + b.token_count - tokens_shared));
    put(share(content_shared, content_a + content_b - content_shared));
    put(share(content_shared, std::min(content_a, content_b), content_a == content_b ? 1.0f : 0.0f));
    put(share(2.0 * idf_shared, a.idf_sum + b.idf_sum));
    put(idf_shared_max);
    put(idf_shared);
    put(static_cast<double>(content_shared));
    put(only[0].idf + only[1].idf);
    put(std::min(only[0].idf, only[1].idf));
    put(std::max(only[0].idf_max, only[1].idf_max));
    put(std::min(only[0].idf_max, only[1].idf_max));
    put(static_cast<double>(only[0].words + only[1].words));
    put(static_cast<double>(std::min(only[0].words, only[1].words)));
    put(static_cast<double>(only[0].content + only[1].content));
    put(share(dot, std::sqrt(static_cast<double>(a.tfidf_norm2) * b.tfidf_norm2), words_a == words_b ? 1.0f : 0.0f));
    put(share(a.idf_sum + b.idf_sum, static_cast<double>(words_a + words_b), 0.0f));

    for (const auto& [set_a, count_a, set_b, count_b] :
         {std::tuple{&a.bigrams, a.bigram_count, &b.bigrams, b.bigram_count},
          std::tuple{&a.char3, a.char3_count, &b.char3, b.char3_count},
          std::tuple{&a.char5, a.char5_count, &b.char5, b.char5_count}}) {
      const auto both = static_cast<std::uint32_t>(shared_bits(*set_a, *set_b));
      put(share(both, count_a + count_b - both));
      put(share(both, std::min(count_a, count_b), count_a == count_b ? 1.0f : 0.0f));
    }

    const std::size_t length_a = a.sequence.size(), length_b = b.sequence.size();
    const std::size_t shorter = std::min(length_a, length_b), longer = std::max(length_a, length_b);
    put(share(shorter, longer));
    put(std::log1p(static_cast<double>(longer - shorter)));
    put(share(std::min(a.characters, b.characters), std::max(a.characters, b.characters)));
    put(std::log1p(static_cast<double>(std::max(a.characters, b.characters) - std::min(a.characters, b.characters))));
    put(std::log1p(static_cast<double>(length_a + length_b)));
    put(shorter > 0 && a.sequence.front() == b.sequence.front());
    put(shorter > 1 && a.sequence[0] == b.sequence[0] && a.sequence[1] == b.sequence[1]);
    put(shorter > 0 && a.sequence.back() == b.sequence.back());
    put(a.question_words == b.question_words);
    put(std::popcount(static_cast<unsigned>(a.question_words ^ b.question_words)));
    put(a.first_question_word >= 0 && a.first_question_word == b.first_question_word);
    put(std::min(a.first_question_word, b.first_question_word));
    put(std::max(a.first_question_word, b.first_question_word));

    const auto [common_subsequence, common_run] = common_token_runs(a.sequence, b.sequence);
    put(share(common_subsequence, longer));
    put(share(common_run, shorter, longer == 0 ? 1.0f : 0.0f));
    put(share(static_cast<double>(std::max(tokens_shared, common_subsequence) - common_subsequence), tokens_shared, 0.0f));
    std::size_t prefix = 0, suffix = 0;
    while (prefix < shorter && a.sequence[prefix] == b.sequence[prefix]) ++prefix;
    while (suffix < shorter && a.sequence[length_a - 1 - suffix] == b.sequence[length_b - 1 - suffix]) ++suffix;
    put(share(prefix, shorter, longer == 0 ? 1.0f : 0.0f));
    put(share(suffix, shorter, longer == 0 ? 1.0f : 0.0f));

    const bool numbers_a = !a.numbers.empty(), numbers_b = !b.numbers.empty();
    const bool same_numbers = same_multiset(a.numbers, a.numbers_sum, b.numbers, b.numbers_sum);
    put(numbers_a && numbers_b && same_numbers);
    put(numbers_a && numbers_b && !same_numbers);
    put(numbers_a != numbers_b);
    const veto_reason veto = hashed_guard(a, b);
    put(veto == veto_reason::negation_differs);
    put(veto == veto_reason::order_swapped);
    put(veto != veto_reason::none);

    const std::size_t entities_shared = detail::shared_count(a.entities, b.entities);
    put(static_cast<double>(entities_shared));
    put(static_cast<double>(a.entities.size() + b.entities.size() - 2 * entities_shared));
    assert(k == feature_count);
  }

  /// lexical_guard's checks (numbers, negation, order) on the prepared
  /// tokens: the answer lexical_guard().vetoes(request_text, stored_text)
  /// gives, without tokenizing again.
  veto_reason guard_veto(const prepared_text& request, const prepared_text& stored) const {
    return lexical_guard().vetoes(request.tokens, stored.tokens);
  }

  const word_idf& idf() const noexcept { return idf_; }

 private:
  // Sets the bit the top bits of a well-mixed hash choose.
  static void set_bit(prepared_text::ngram_set& set, std::uint64_t hash) noexcept {
    static_assert(prepared_text::ngram_bits == 2048);
    const std::uint64_t bit = hash >> 53;
    set[bit / 64] |= std::uint64_t{1} << (bit % 64);
  }

  static std::uint32_t popcount(const prepared_text::ngram_set& set) noexcept {
    std::uint32_t count = 0;
    for (const auto w : set) count += static_cast<std::uint32_t>(std::popcount(w));
    return count;
  }

  static bool same_multiset(std::span<const std::uint64_t> a, std::uint64_t sum_a, std::span<const std::uint64_t> b,
                            std::uint64_t sum_b) noexcept {
    return a.size() == b.size() && sum_a == sum_b;
  }

  static std::size_t shared_bits(const prepared_text::ngram_set& a, const prepared_text::ngram_set& b) noexcept {
    std::size_t both = 0;
    for (std::size_t w = 0; w < a.size(); ++w) both += static_cast<std::size_t>(std::popcount(a[w] & b[w]));
    return both;
  }

  // lexical_guard::vetoes on hashes instead of texts: the same answer
  // unless two different tokens (or two multisets of them) share a 64-bit
  // hash.
  static veto_reason hashed_guard(const prepared_text& a, const prepared_text& b) noexcept {
    if (!same_multiset(a.numbers, a.numbers_sum, b.numbers, b.numbers_sum)) return veto_reason::numbers_differ;
    if (a.negation_parity != b.negation_parity) return veto_reason::negation_differs;
    if (a.numbers != b.numbers) return veto_reason::order_swapped;
    if (a.order_word && b.order_word && a.sequence != b.sequence &&
        same_multiset(a.sequence, a.sequence_sum, b.sequence, b.sequence_sum))
      return veto_reason::order_swapped;
    return veto_reason::none;
  }

  // The longest common subsequence and the longest common run of two
  // token sequences, over their first max_tokens tokens (dynamic
  // programming in two rows on the stack).
  static std::pair<std::size_t, std::size_t> common_token_runs(std::span<const std::uint64_t> a,
                                                               std::span<const std::uint64_t> b) noexcept {
    constexpr std::size_t max_tokens = 255;
    a = a.first(std::min(a.size(), max_tokens));
    b = b.first(std::min(b.size(), max_tokens));
    // rows[r][j]: over a's first i tokens (r = i % 2) and b's first j.
    std::array<std::array<std::uint8_t, max_tokens + 1>, 2> subsequence, run;
    std::fill_n(subsequence[0].begin(), b.size() + 1, std::uint8_t{0});
    std::fill_n(run[0].begin(), b.size() + 1, std::uint8_t{0});
    subsequence[1][0] = run[1][0] = 0;
    std::size_t longest_run = 0;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      auto& row = subsequence[i % 2];
      const auto& above = subsequence[(i - 1) % 2];
      auto& run_row = run[i % 2];
      const auto& run_above = run[(i - 1) % 2];
      for (std::size_t j = 1; j <= b.size(); ++j) {
        if (a[i - 1] == b[j - 1]) {
          row[j] = static_cast<std::uint8_t>(above[j - 1] + 1);
          run_row[j] = static_cast<std::uint8_t>(run_above[j - 1] + 1);
          longest_run = std::max<std::size_t>(longest_run, run_row[j]);
        } else {
          row[j] = std::max(above[j], row[j - 1]);
          run_row[j] = 0;
        }
      }
    }
    return {subsequence[a.size() % 2][b.size()], longest_run};
  }

  // Named things: words capitalised where a sentence does not start
  // ("iPhone", "Java", "USA"), and words mixing letters and digits
  // ("iphone7", "mp3"), each hashed case-folded.
  static void collect_entities(std::string_view text, std::vector<std::uint64_t>& out) {
    // What a byte is, as bits: one table load per byte instead of a chain of comparisons.
    enum : std::uint8_t { lower = 1, upper = 2, digit = 4, other = 8, multibyte = 16 };
    static constexpr auto classes = [] {
      std::array<std::uint8_t, 256> table{};
      for (int b = 0; b < 256; ++b)
        table[b] = b >= 'a' && b <= 'z' ? lower : b >= 'A' && b <= 'Z' ? upper : b >= '0' && b <= '9' ? digit
                 : b < 0x80                ? other : multibyte;
      return table;
    }();
    out.clear();
    bool sentence_start = true;
    for (std::size_t position = 0; position < text.size();) {
      // One run of letters and digits, [start, position).
      const std::size_t start = position;
      std::size_t length = 0;
      unsigned seen = 0;
      char32_t separator = 0;
      while (position < text.size()) {
        const std::uint8_t kind = classes[static_cast<unsigned char>(text[position])];
        if (kind == other) {
          separator = static_cast<unsigned char>(text[position]);  // an apostrophe too: "I'm" is no name
          break;
        }
        if (kind == multibyte) {
          const auto [c, bytes] = unicode::decode_utf8(text, position);
          const auto c_class = unicode::classify(c);
          if (c_class == unicode::char_class::letter) {
            seen |= unicode::simple_case_fold(c) != c ? upper : lower;
          } else if (c_class == unicode::char_class::digit) {
            seen |= digit;
          } else {
            separator = c;
            break;
          }
          position += bytes - 1;
        } else {
          seen |= kind;
        }
        ++position;
        ++length;
      }
      const bool letters = (seen & (lower | upper)) != 0, digits = (seen & digit) != 0;
      if (length >= 2 && (((seen & upper) && !sentence_start) || (letters && digits)))
        out.push_back(folded_hash(text.substr(start, position - start)));
      if (length > 0) sentence_start = false;
      if (separator == U'.' || separator == U'?' || separator == U'!') sentence_start = true;
      if (position < text.size()) position += unicode::decode_utf8(text, position).length;
    }
    detail::sort_unique(out);
  }

  // The hash of a run of letters and digits, case-folded.
  static std::uint64_t folded_hash(std::string_view run) noexcept {
    std::uint64_t hash = detail::pair_entity_seed;
    for (std::size_t position = 0; position < run.size();) {
      const auto [c, bytes] = unicode::decode_utf8(run, position);
      position += bytes;
      hash = (hash ^ unicode::simple_case_fold(c)) * 0x100000001B3ull;
    }
    return detail::mix64(hash);
  }

  word_idf idf_;
};

}  // namespace llmgate::inline v0
