// Embedder quality: how well cosine similarity of llmgate's hashing
// embedder separates duplicate questions from non-duplicates, against a
// plain bag-of-words baseline computed in the same run on the same data.
//
//   llmgate_bench_embedder_quality [--qqp FILE] [--paraphrase FILE] [--dim D] [--split all|even|odd]
//
// Data (read at run time, never copied into the project):
//   --qqp         Quora question pairs, JSON lines {"a","b","duplicate"}
//                 (default ../shared/data/qqp/pairs.dev.jsonl)
//   --paraphrase  a JSON list of {"origin","similar"} paraphrase pairs
//                 (default ../shared/data/paraphrase/pairs.json)
// A missing file is skipped with a message. --split even|odd keeps every
// other pair, so that settings chosen on one half can be checked on the
// other.
//
// Each embedder first observes every distinct question once and refreshes
// its IDF, as it would learn from traffic, then embeds every question.
// Measured: ROC AUC of the cosine for duplicate versus non-duplicate pairs
// (the chance that a random duplicate pair scores above a random
// non-duplicate pair); precision and recall of "cosine >= t" at t = 0.99
// .. 0.80; the time of one embed (p50 and p99 over all questions, one
// thread); and on the paraphrase pairs (all positives) the mean cosine of
// the pairs against that of random pairings, and the AUC between the two.
// The hashing embedder's variants with one part turned off show what
// each part brings.

#include <algorithm>    // std::sort, std::min
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint64_t
#include <exception>    // std::exception
#include <filesystem>   // std::filesystem::exists
#include <fstream>      // std::ifstream
#include <iostream>     // std::cout, std::cerr
#include <iterator>     // std::istreambuf_iterator
#include <memory>       // std::unique_ptr, std::make_unique
#include <numeric>      // std::iota
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <system_error> // std::error_code
#include <unordered_map>  // std::unordered_map
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json.hpp>

#include <llmgate/embed/embedder.hpp>
#include <llmgate/embed/hashing_embedder.hpp>
#include <llmgate/embed/tokenizer.hpp>
#include <llmgate/simd/kernels.hpp>
#include <llmgate/detail/xxhash.hpp>  // XXH3_64bits for the baseline

#include "bench_support.hpp"

#ifndef LLMGATE_SHARED_DATA_DIR
#define LLMGATE_SHARED_DATA_DIR "../shared/data"  // scripts/bench runs from the repository root
#endif

namespace {

using namespace llmgate_bench;

constexpr double thresholds[] = {0.99, 0.98, 0.97, 0.95, 0.90, 0.85, 0.80};

struct options {
  std::string qqp = LLMGATE_SHARED_DATA_DIR "/qqp/pairs.dev.jsonl";
  std::string paraphrase = LLMGATE_SHARED_DATA_DIR "/paraphrase/pairs.json";
  std::size_t dim = 384;
  std::string split = "all";
};

const char* const usage =
    "usage: llmgate_bench_embedder_quality [--qqp FILE] [--paraphrase FILE] [--dim D] [--split all|even|odd]\n";

std::optional<options> parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--qqp") o.qqp = value;
    else if (flag == "--paraphrase") o.paraphrase = value;
    else if (flag == "--dim") o.dim = std::stoul(value);
    else if (flag == "--split") o.split = value;
    else return std::nullopt;
  }
  if (argc % 2 == 0 || o.dim == 0 || (o.split != "all" && o.split != "even" && o.split != "odd"))
    return std::nullopt;
  return o;
}

// The baseline: a plain bag of words. Case-folded words (llmgate's
// tokenizer, so both see the same words) counted, hashed with a sign into
// the same dimensions, L2-normalised; no n-grams, no stemming, no IDF.
class bag_of_words_embedder {
 public:
  explicit bag_of_words_embedder(std::size_t dimension) : dimension_(dimension) {}
  std::size_t dimension() const noexcept { return dimension_; }
  std::error_code embed(std::string_view text, std::span<float> out) const {
    if (out.size() != dimension_) return make_error_code(llmgate::errc::dimension_mismatch);
    thread_local llmgate::token_list tokens;
    llmgate::tokenize(text, tokens);
    std::fill(out.begin(), out.end(), 0.0f);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const auto word = tokens[i].text;
      const std::uint64_t h = XXH3_64bits(word.data(), word.size());
      out[((h & 0xFFFFFFFFull) * dimension_) >> 32] += (h >> 32) & 1 ? -1.0f : 1.0f;
    }
    llmgate::simd::normalize(out.data(), dimension_);
    return {};
  }

 private:
  std::size_t dimension_;
};
static_assert(llmgate::Embedder<bag_of_words_embedder>);

// Texts stored once each, and pairs of them by index.
struct pair_set {
  std::vector<std::string> texts;
  std::vector<std::uint32_t> first, second;
  std::vector<char> positive;

  std::uint32_t intern(std::string text, std::unordered_map<std::string, std::uint32_t>& ids) {
    const auto [at, added] = ids.try_emplace(std::move(text), static_cast<std::uint32_t>(texts.size()));
    if (added) texts.push_back(at->first);
    return at->second;
  }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::optional<pair_set> load_qqp(const options& o) {
  if (!std::filesystem::exists(o.qqp)) return std::nullopt;
  pair_set set;
  std::unordered_map<std::string, std::uint32_t> ids;
  std::ifstream in(o.qqp);
  std::string line;
  for (std::size_t row = 0; std::getline(in, line); ++row) {
    if (line.empty() || (o.split == "even" && row % 2) || (o.split == "odd" && row % 2 == 0)) continue;
    const auto value = boost::json::parse(line);
    const auto& object = value.as_object();
    set.first.push_back(set.intern(std::string(object.at("a").as_string()), ids));
    set.second.push_back(set.intern(std::string(object.at("b").as_string()), ids));
    set.positive.push_back(object.at("duplicate").to_number<int>() == 1);
  }
  return set;
}

// Paraphrase pairs (origin_i, similar_i) as positives; (origin_i,
// similar_{i+n/2}) as the random pairs they are compared with.
std::optional<pair_set> load_paraphrase(const options& o) {
  if (!std::filesystem::exists(o.paraphrase)) return std::nullopt;
  pair_set set;
  std::unordered_map<std::string, std::uint32_t> ids;
  std::vector<std::uint32_t> origin, similar;
  const auto document = boost::json::parse(read_file(o.paraphrase));
  for (const auto& item : document.as_array()) {
    origin.push_back(set.intern(std::string(item.at("origin").as_string()), ids));
    similar.push_back(set.intern(std::string(item.at("similar").as_string()), ids));
  }
  const std::size_t n = origin.size();
  for (std::size_t i = 0; i < n; ++i) {
    set.first.insert(set.first.end(), {origin[i], origin[i]});
    set.second.insert(set.second.end(), {similar[i], similar[(i + n / 2) % n]});
    set.positive.insert(set.positive.end(), {1, 0});
  }
  return set;
}

// The chance that a random positive scores above a random negative, ties
// counting half (Mann-Whitney U over the average ranks).
double roc_auc(const std::vector<float>& score, const std::vector<char>& positive) {
  std::vector<std::size_t> order(score.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return score[a] < score[b]; });
  double positive_rank_sum = 0, positives = 0;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && score[order[j]] == score[order[i]]) ++j;
    const double average_rank = (i + 1 + j) / 2.0;  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k)
      if (positive[order[k]]) positive_rank_sum += average_rank, positives += 1;
    i = j;
  }
  const double negatives = static_cast<double>(score.size()) - positives;
  if (positives == 0 || negatives == 0) return 0.5;
  return (positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

// What one embedder scored; a part is absent when its data was.
struct quality {
  std::string name;
  std::optional<double> auc, p50_us, p99_us;
  std::vector<double> precision, recall;  // by threshold
  std::optional<double> paraphrase_mean, random_mean, paraphrase_auc;
};

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[std::min(values.size() - 1, static_cast<std::size_t>(p * values.size()))];
}

// Cosine of every pair (vectors are unit length), after the embedder has
// learned from the texts; `micros` gets the time of each embed.
template <llmgate::Embedder E>
std::vector<float> pair_cosines(const E& embedder, const pair_set& set, std::vector<double>& micros) {
  const std::size_t dim = embedder.dimension();
  std::vector<float> vectors(set.texts.size() * dim);
  micros.clear();
  for (std::size_t t = 0; t < set.texts.size(); ++t) {
    const auto start = steady::now();
    const auto ec = embedder.embed(set.texts[t], std::span<float>(vectors.data() + t * dim, dim));
    micros.push_back(seconds_since(start) * 1e6);
    if (ec) throw std::system_error(ec, "embed");
  }
  std::vector<float> cosines(set.first.size());
  for (std::size_t p = 0; p < cosines.size(); ++p)
    cosines[p] = llmgate::simd::dot(vectors.data() + set.first[p] * dim, vectors.data() + set.second[p] * dim, dim);
  return cosines;
}

template <llmgate::Embedder E>
void score_question_pairs(const E& embedder, const pair_set& pairs, quality& q) {
  std::vector<double> micros;
  const auto cosines = pair_cosines(embedder, pairs, micros);
  q.auc = roc_auc(cosines, pairs.positive);
  q.p50_us = percentile(micros, 0.50);
  q.p99_us = percentile(micros, 0.99);
  for (const double t : thresholds) {
    double above = 0, right = 0, positives = 0;
    for (std::size_t p = 0; p < cosines.size(); ++p) {
      positives += pairs.positive[p];
      if (cosines[p] >= t) above += 1, right += pairs.positive[p];
    }
    q.precision.push_back(above ? right / above : 1.0);
    q.recall.push_back(positives ? right / positives : 0.0);
  }
}

template <llmgate::Embedder E>
void score_paraphrases(const E& embedder, const pair_set& pairs, quality& q) {
  std::vector<double> micros;
  const auto cosines = pair_cosines(embedder, pairs, micros);
  double paraphrase = 0, random = 0;
  for (std::size_t p = 0; p < cosines.size(); ++p) (pairs.positive[p] ? paraphrase : random) += cosines[p];
  q.paraphrase_mean = paraphrase / (cosines.size() / 2);
  q.random_mean = random / (cosines.size() / 2);
  q.paraphrase_auc = roc_auc(cosines, pairs.positive);
}

// Scores the embedder that make(options, texts) returns, made afresh for
// each data set so that it learns from that set's texts only.
template <class Make>
quality measure(std::string name, Make make, const options& o, const std::optional<pair_set>& qqp,
                const std::optional<pair_set>& paraphrase) {
  progress("embedder_quality: %s", name.c_str());
  quality q;
  q.name = std::move(name);
  if (qqp) score_question_pairs(*make(o, *qqp), *qqp, q);
  if (paraphrase) score_paraphrases(*make(o, *paraphrase), *paraphrase, q);
  return q;
}

// Makes a hashing embedder with `change` applied to the default options,
// which observes every text once, as it would learn from traffic, and then
// refreshes its IDF (unless `learn` is false).
auto hashing(void (*change)(llmgate::hashing_embedder_options&), bool learn = true) {
  return [change, learn](const options& o, const pair_set& set) {
    llmgate::hashing_embedder_options settings;
    settings.dimension = o.dim;
    change(settings);
    auto embedder = std::make_unique<llmgate::hashing_embedder>(settings);
    for (const auto& text : set.texts) embedder->observe(text);
    if (learn) embedder->refresh();
    return embedder;
  };
}

auto bag_of_words() {
  return [](const options& o, const pair_set&) { return std::make_unique<bag_of_words_embedder>(o.dim); };
}

}  // namespace

int main(int argc, char** argv) try {
  const auto parsed = parse(argc, argv);
  if (!parsed) {
    std::cerr << usage;
    return 2;
  }
  const options& o = *parsed;
  const auto qqp = load_qqp(o);
  const auto paraphrase = load_paraphrase(o);
  if (!qqp) progress("embedder_quality: %s not found, skipping the question pairs", o.qqp.c_str());
  if (!paraphrase) progress("embedder_quality: %s not found, skipping the paraphrases", o.paraphrase.c_str());
  if (!qqp && !paraphrase) {
    progress("embedder_quality: no data (see ../shared/data/README.md); nothing to measure");
    return 0;
  }
  if (qqp)
    progress("embedder_quality: %zu question pairs (%s), %zu distinct questions, dimension %zu",
             qqp->positive.size(), o.split.c_str(), qqp->texts.size(), o.dim);

  const std::vector<quality> results = {
      measure("bag_of_words", bag_of_words(), o, qqp, paraphrase),
      measure("hashing", hashing([](auto&) {}), o, qqp, paraphrase),
      measure("hashing_no_idf", hashing([](auto&) {}, false), o, qqp, paraphrase),
      measure("hashing_no_char_ngrams", hashing([](auto& s) { s.char_ngram_weight = 0; }), o, qqp, paraphrase),
      measure("hashing_no_bigrams", hashing([](auto& s) { s.bigram_weight = 0; }), o, qqp, paraphrase),
      measure("hashing_no_stemming", hashing([](auto& s) { s.stem_english = false; }), o, qqp, paraphrase),
      // Classic TF-IDF over words: the hashing embedder with only its words.
      measure("tf_idf_words", hashing([](auto& s) {
                s.number_weight = 1, s.bigram_weight = 0, s.first_word_weight = 0;
                s.char_ngram_weight = 0, s.stem_english = false;
              }), o, qqp, paraphrase),
  };

  if (qqp) {
    std::cout << "\nQQP " << o.split << ": precision / recall of cosine >= t (duplicate pairs "
              << std::count(qqp->positive.begin(), qqp->positive.end(), 1) << " of " << qqp->positive.size() << ")\n";
    std::vector<std::string> columns = {"embedder"};
    for (const double t : thresholds) columns.push_back("P@" + number(t, 2) + " R@" + number(t, 2));
    table curves(columns);
    for (const auto& q : results) {
      std::vector<std::string> row = {q.name};
      for (std::size_t i = 0; i < q.precision.size(); ++i)
        row.push_back(number(q.precision[i], 3) + " " + number(q.recall[i], 3));
      curves.add_row(row);
    }
    curves.print(std::cout);
  }

  std::cout << "\nSummary (dimension " << o.dim << ", one thread)\n";
  table summary({"embedder", "qqp_auc", "embed_us_p50", "embed_us_p99", "para_pairs_cos", "para_random_cos",
                 "para_auc", "auc_vs_bag_of_words"});
  std::vector<json_line> lines;
  const auto baseline_auc = results.front().auc;
  for (const auto& q : results) {
    std::optional<double> ratio;
    if (q.auc && baseline_auc) ratio = *q.auc / *baseline_auc;
    summary.add_row({q.name, number(q.auc), number(q.p50_us, 3), number(q.p99_us, 3), number(q.paraphrase_mean),
                     number(q.random_mean), number(q.paraphrase_auc), number(ratio)});
    lines.push_back(json_line()
                        .add("bench", "embedder_quality")
                        .add("embedder", q.name)
                        .add("split", o.split)
                        .add("dim", o.dim)
                        .add("auc", q.auc)
                        .add("embed_us_p50", q.p50_us)
                        .add("embed_us_p99", q.p99_us)
                        .add("paraphrase_mean_cosine", q.paraphrase_mean)
                        .add("random_mean_cosine", q.random_mean)
                        .add("paraphrase_auc", q.paraphrase_auc));
  }
  summary.print(std::cout);
  std::cout << '\n';
  publish("embedder_quality", summary, lines);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "embedder_quality: " << e.what() << '\n';
  return 1;
}
