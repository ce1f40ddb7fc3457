// Semantic-cache benchmark: the hit path (embed + HNSW search + guard) of a
// cache holding N entries, one thread, against the same lookups answered by
// an exact scan of the same vectors (flat_index), the cache without an ANN
// index, in the same run.
//
//   llmgate_bench_cache [--n N] [--lookups L] [--peer-lookups P] [--dim D] [--fill-threads T]
//
// (--dim: the embedder's dimension, default the embedder's own.)
//
// The fill uses both cores: T (default 2) threads call insert() at once, each
// on its part of every block of 50,000 questions. To put the fill time
// beside a one-thread fill's in the same run (a second 1M fill would add
// some 20 minutes), the first 5,000 questions of every block are inserted
// by one thread and the rest by T; each part's time per entry, times the
// block's size, summed over the blocks, estimates the whole fill on one
// thread and on T (both see the same sizes of index):
//   {"bench":"cache_fill","entries":n,"threads":T,"fill_s":..,"fill_s_1_thread":..,
//    "fill_s_threads":..,"speedup":..}
// fill_s is the fill as it ran (one-thread parts included).
//
// Data: N (1,000,000) distinct questions of 6 to 14 words drawn from a
// 20,000-word vocabulary with Zipf frequencies, all in one scope (the worst
// case: one index holds everything). The hashing embedder's weights are
// learned first from a sample of 100,000 of them, as a cache that has been
// running has; it is then frozen so that filling does not re-embed.
// A hit query is a stored question with one word left out (the closest
// stored question is its source, at a similarity near 0.9); a miss query is
// a new question. Each lookup is timed alone, by steady_clock (wall time)
// and by the thread's processor time (which leaves out the time the thread
// was not running: on a shared machine, most of a slow outlier). The HNSW
// parameters are the cache's defaults unless given.
//
// The hit queries are timed twice on the same cache: with the default
// verifier (the similarity behind the lexical guard) and with the learned
// verifier, whose model is fitted first on the fit part of
// ../shared/data/qqp/pairs.dev.jsonl (verifier_training.hpp's split; the
// hand-set prior where the data is absent, which the output says). The
// learned verifier asks its model about every neighbour above the
// prefilter similarity the gateway uses with fitted weights
// (learned_verifier::advised_prefilter).
//
// Prints: fill time, hit and miss latency percentiles, the share of hit
// queries answered with their source's answer, the exact scan's latency on
// the same hit queries, and
//   {"bench":"cache_lookup","entries":n,"p50_us":..,"p99_us":..,...,"vs_flat_scan":..}
// where vs_flat_scan = flat scan p50 / cache p50, then
//   {"bench":"cache_lookup_verifier","entries":n,"verifier":"fitted"|"prior","p50_us":..,"p99_us":..,
//    "cpu_p99_us":..,"p99_ratio_vs_default":..}

#include <algorithm>    // std::sort, std::min
#include <chrono>       // std::chrono::steady_clock
#include <cmath>        // std::pow
#include <cstddef>      // std::size_t
#include <cstdio>       // std::fputs
#include <cstdlib>      // std::strtoull
#include <filesystem>   // std::filesystem::exists
#include <iostream>     // std::cout
#include <optional>     // std::optional
#include <random>       // std::mt19937_64, std::discrete_distribution
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <thread>       // std::thread
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/unordered/unordered_flat_set.hpp>  // distinct questions

#include <llmgate/cache/learned_verifier.hpp>
#include <llmgate/cache/semantic_cache.hpp>
#include <llmgate/cache/verifier_training.hpp>
#include <llmgate/tools/labelled_pairs.hpp>
#include <llmgate/index/flat_index.hpp>

#include "bench_support.hpp"

namespace {

using namespace llmgate_bench;

struct options {
  std::size_t n = 1'000'000;
  std::size_t lookups = 5'000;
  std::size_t peer_lookups = 200;  // an exact scan of 1M vectors takes tens of milliseconds
  llmgate::hnsw_parameters hnsw = llmgate::default_index_factory{}.parameters;
  std::string storage = "int8";  // the HNSW rows: int8 (the cache's default) or float16
  std::size_t dimension = llmgate::hashing_embedder::options_type{}.dimension;
  std::size_t fill_threads = 2;  // threads inserting at once while filling
};

constexpr const char* usage =
    "usage: llmgate_bench_cache [--n N] [--lookups L] [--peer-lookups P] [--m M]\n"
    "                           [--ef-construction E] [--ef-search E] [--storage int8|float16]\n"
    "                           [--dim D] [--fill-threads T]\n";

std::optional<options> parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--storage") {
      o.storage = argv[i + 1];
      if (o.storage != "float16" && o.storage != "int8") return std::nullopt;
      continue;
    }
    const std::size_t value = std::strtoull(argv[i + 1], nullptr, 10);
    if (value == 0) return std::nullopt;
    if (flag == "--n") o.n = value;
    else if (flag == "--lookups") o.lookups = value;
    else if (flag == "--peer-lookups") o.peer_lookups = value;
    else if (flag == "--m") o.hnsw.m = value;
    else if (flag == "--ef-construction") o.hnsw.ef_construction = value;
    else if (flag == "--ef-search") o.hnsw.ef_search = value;
    else if (flag == "--dim") o.dimension = value;
    else if (flag == "--fill-threads") o.fill_threads = value;
    else return std::nullopt;
  }
  if (argc % 2 == 0) return std::nullopt;
  return o;
}

// Pronounceable made-up words, so the embedder sees words and character
// n-grams as it does in real text, without a dictionary file.
std::vector<std::string> make_vocabulary(std::size_t size, std::mt19937_64& random) {
  static constexpr std::string_view onsets[] = {"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p",
                                                "r", "s", "t", "v", "w", "z", "br", "ch", "st", "tr", "pl"};
  static constexpr std::string_view vowels[] = {"a", "e", "i", "o", "u", "ai", "ea", "ou"};
  boost::unordered_flat_set<std::string> seen;
  std::vector<std::string> words;
  while (words.size() < size) {
    std::string word;
    const int syllables = 1 + static_cast<int>(random() % 3);
    for (int s = 0; s < syllables; ++s) {
      word += onsets[random() % std::size(onsets)];
      word += vowels[random() % std::size(vowels)];
    }
    if (random() % 2) word += onsets[random() % std::size(onsets)];
    if (seen.insert(word).second) words.push_back(std::move(word));
  }
  return words;
}

class question_generator {
 public:
  explicit question_generator(std::uint64_t seed) : random_(seed), vocabulary_(make_vocabulary(20'000, random_)) {
    std::vector<double> weights(vocabulary_.size());
    for (std::size_t rank = 0; rank < weights.size(); ++rank) weights[rank] = 1.0 / std::pow(rank + 1.0, 1.07);
    zipf_ = std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
  }

  std::vector<std::string> words() {
    std::vector<std::string> sentence(6 + random_() % 9);
    sentence.front() = openers[random_() % std::size(openers)];
    for (std::size_t w = 1; w < sentence.size(); ++w) sentence[w] = vocabulary_[zipf_(random_)];
    return sentence;
  }

  std::mt19937_64& random() { return random_; }

 private:
  static constexpr const char* openers[] = {"how", "what", "why", "where", "when", "which", "who", "can"};
  std::mt19937_64 random_;
  std::vector<std::string> vocabulary_;
  std::discrete_distribution<std::size_t> zipf_;
};

std::string join(const std::vector<std::string>& words, std::size_t skip = std::string::npos) {
  std::string text;
  for (std::size_t w = 0; w < words.size(); ++w) {
    if (w == skip) continue;
    if (!text.empty()) text += ' ';
    text += words[w];
  }
  return text + '?';
}

struct latency {
  double p50_us, p90_us, p99_us;
};

// The fill's blocks, and the part of each that one thread inserts.
constexpr std::size_t fill_block = 50'000;
constexpr std::size_t fill_sample = 5'000;

#ifndef LLMGATE_SHARED_DATA_DIR
#define LLMGATE_SHARED_DATA_DIR "../shared/data"  // scripts/bench runs from the repository root
#endif

// The learned verifier, fitted on the QQP dev split's fit part where the
// data is, else the prior.
llmgate::learned_verifier learned() {
  const std::string pairs_file = LLMGATE_SHARED_DATA_DIR "/qqp/pairs.dev.jsonl";
  if (!std::filesystem::exists(pairs_file)) {
    progress("no %s (see ../shared/data/README.md): the learned verifier is the hand-set prior", pairs_file.c_str());
    return llmgate::learned_verifier();
  }
  progress("fitting the learned verifier on the fit part of %s", pairs_file.c_str());
  const auto pairs = llmgate::read_labelled_pairs(pairs_file);
  const auto split = llmgate::split_pairs(pairs);
  const auto similarity = llmgate::pair_similarity::observing(split.fit);
  return llmgate::learned_verifier(llmgate::fit_verifier(split.fit, similarity, {.source = "QQP dev fit part"}));
}

// Either verifier, switched between timing runs over the same cache.
struct switched_verifier {
  struct prepared_request {
    std::string_view text;
    llmgate::learned_verifier::prepared_request prepared;  // the learned verifier's, when it is on
  };

  const llmgate::learned_verifier* model;
  const bool* learned_on;

  prepared_request prepare(std::string_view text) const {
    return {text, *learned_on ? model->prepare(text) : llmgate::learned_verifier::prepared_request{}};
  }
  float probability(const llmgate::hash128& scope, const prepared_request& request,
                    const llmgate::verification_candidate& candidate) const {
    return *learned_on ? model->probability(scope, request.prepared, candidate) : candidate.similarity;
  }
  llmgate::veto_reason vetoes(const prepared_request& request, const llmgate::verification_candidate& candidate) const {
    return *learned_on ? model->vetoes(request.prepared, candidate)
                       : llmgate::lexical_guard().vetoes(request.text, candidate.stored);
  }
};

latency percentiles(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  const auto at = [&](double q) { return 1e6 * seconds[static_cast<std::size_t>(q * (seconds.size() - 1))]; };
  return {at(0.50), at(0.90), at(0.99)};
}

template <class Element>
void run(const options& o) {
  progress("generating %zu distinct questions", o.n);
  question_generator generator(7);
  boost::unordered_flat_set<std::string> seen;
  std::vector<std::vector<std::string>> stored;
  stored.reserve(o.n);
  while (stored.size() < o.n) {
    auto words = generator.words();
    if (seen.insert(join(words)).second) stored.push_back(std::move(words));
  }

  llmgate::hashing_embedder::options_type frozen;
  frozen.first_refresh = 0;  // never refresh while filling: the weights are learned below
  frozen.dimension = o.dimension;
  llmgate::hashing_embedder learning(frozen);
  for (std::size_t i = 0; i < std::min<std::size_t>(o.n, 100'000); ++i) learning.observe(join(stored[i]));
  learning.refresh();

  const llmgate::learned_verifier model = learned();
  bool learned_on = false;
  using cache_type = llmgate::basic_semantic_cache<std::uint32_t, llmgate::hashing_embedder,
                                                   llmgate::hnsw_index_factory<llmgate::cosine_metric, Element>,
                                                   llmgate::lru_eviction, llmgate::static_threshold, switched_verifier>;
  cache_type cache({.max_entries = o.n, .prefilter_similarity = llmgate::learned_verifier::advised_prefilter},
                   std::move(learning), llmgate::static_threshold{0.80f}, switched_verifier{&model, &learned_on}, {}, {},
                   llmgate::hnsw_index_factory<llmgate::cosine_metric, Element>{o.hnsw});
  const llmgate::hashing_embedder& embedder = cache.embedder();
  const llmgate::cache_scope scope({.tenant = "bench", .model = "model"});
  progress("filling the cache (HNSW M=%zu, ef_construction=%zu, ef_search=%zu, %s; %zu threads, one for "
           "the first %zu of every %zu)", o.hnsw.m, o.hnsw.ef_construction, o.hnsw.ef_search, o.storage.c_str(),
           o.fill_threads, fill_sample, fill_block);
  const auto insert_range = [&](std::size_t first, std::size_t end) {
    for (std::size_t i = first; i < end; ++i) cache.insert(scope, join(stored[i]), static_cast<std::uint32_t>(i));
  };
  // Inserts [first, end) with `threads` threads, each taking every
  // threads-th slice of 64 questions (so that each sees the same sizes).
  const auto insert_on = [&](std::size_t threads, std::size_t first, std::size_t end) {
    constexpr std::size_t slice = 64;
    const auto work = [&](std::size_t t) {
      for (std::size_t from = first + t * slice; from < end; from += threads * slice)
        insert_range(from, std::min(end, from + slice));
    };
    std::vector<std::thread> others;
    for (std::size_t t = 1; t < threads; ++t) others.emplace_back(work, t);
    work(0);
    for (auto& other : others) other.join();
  };
  const auto fill_start = steady::now();
  double fill_1_thread_s = 0, fill_threads_s = 0;
  for (std::size_t first = 0; first < o.n; first += fill_block) {
    const std::size_t end = std::min(o.n, first + fill_block), middle = std::min(end, first + fill_sample);
    const double one_s = time_once([&] { insert_on(1, first, middle); });
    const double many_s = time_once([&] { insert_on(o.fill_threads, middle, end); });
    const double block = double(end - first);
    fill_1_thread_s += one_s / double(middle - first) * block;
    fill_threads_s += end > middle ? many_s / double(end - middle) * block : one_s / double(middle - first) * block;
    const double elapsed = seconds_since(fill_start);
    progress("  %zu / %zu entries, %.0f s, about %.0f s left", end, o.n, elapsed, elapsed / end * (o.n - end));
  }
  const double fill_s = seconds_since(fill_start);

  progress("timing %zu hit and %zu miss lookups", o.lookups, o.lookups);
  std::vector<std::size_t> sources(o.lookups);
  std::vector<std::string> hit_queries(o.lookups), miss_queries(o.lookups);
  for (std::size_t q = 0; q < o.lookups; ++q) {
    sources[q] = generator.random()() % o.n;
    const auto& words = stored[sources[q]];
    hit_queries[q] = join(words, 1 + generator.random()() % (words.size() - 1));
    do miss_queries[q] = join(generator.words());
    while (seen.contains(miss_queries[q]));
  }
  // Each hit query timed alone, by wall clock and by the thread's processor
  // time; a miss query after each when `misses` is given.
  struct timed_hits {
    latency wall, cpu;
    std::size_t hits = 0, right = 0;
  };
  const auto time_hit_queries = [&](std::vector<double>* misses, std::size_t* false_hits) {
    std::vector<double> wall, cpu;
    timed_hits timed;
    for (std::size_t q = 0; q < o.lookups; ++q) {
      typename cache_type::lookup_result found;
      const double cpu_started = thread_cpu_seconds();
      wall.push_back(time_once([&] { found = cache.lookup(scope, hit_queries[q]); }));
      cpu.push_back(thread_cpu_seconds() - cpu_started);
      if (found.outcome == llmgate::lookup_outcome::hit) ++timed.hits, timed.right += *found.answer == sources[q];
      if (!misses) continue;
      misses->push_back(time_once([&] { found = cache.lookup(scope, miss_queries[q]); }));
      *false_hits += found.outcome == llmgate::lookup_outcome::hit;
    }
    timed.wall = percentiles(std::move(wall));
    timed.cpu = percentiles(std::move(cpu));
    return timed;
  };
  std::vector<double> miss_seconds;
  std::size_t false_hits = 0;
  const timed_hits plain = time_hit_queries(&miss_seconds, &false_hits);
  const latency hit = plain.wall, hit_cpu = plain.cpu, miss = percentiles(miss_seconds);
  const std::size_t hits = plain.hits, right = plain.right;

  progress("the same %zu hit queries with the learned verifier (%s)", o.lookups,
           model.fitted() ? "fitted" : "prior");
  learned_on = true;
  const timed_hits verified_run = time_hit_queries(nullptr, nullptr);
  learned_on = false;
  const latency verified = verified_run.wall, verified_cpu = verified_run.cpu;
  const std::size_t verified_hits = verified_run.hits, verified_right = verified_run.right;

  progress("the same hit queries through an exact scan of the same %zu vectors (%zu queries)", o.n,
           o.peer_lookups);
  llmgate::flat_index<> scan(embedder.dimension());
  std::vector<float> vector(embedder.dimension());
  for (std::size_t i = 0; i < o.n; ++i) {
    (void)embedder.embed(join(stored[i]), vector);
    (void)scan.add(i, vector);
  }
  std::vector<double> scan_seconds;
  std::size_t scan_right = 0;
  for (std::size_t q = 0; q < std::min(o.peer_lookups, o.lookups); ++q) {
    scan_seconds.push_back(time_once([&] {
      (void)embedder.embed(hit_queries[q], vector);
      const auto nearest = scan.search(vector, 1);
      scan_right += !nearest.empty() && nearest.front().id == sources[q] && nearest.front().similarity >= 0.80f;
    }));
  }
  const latency peer = percentiles(scan_seconds);

  const auto statistics = cache.statistics();
  table results({"path", "p50_us", "p90_us", "p99_us", "answered"});
  const auto row = [&](const char* name, latency l, double share) {
    results.add_row({name, number(l.p50_us), number(l.p90_us), number(l.p99_us), number(share)});
  };
  row("cache hit query", hit, double(hits) / o.lookups);
  row("  processor time", hit_cpu, double(hits) / o.lookups);
  row("cache miss query", miss, double(false_hits) / o.lookups);
  row("hit query, learned verifier", verified, double(verified_hits) / o.lookups);
  row("  processor time", verified_cpu, double(verified_hits) / o.lookups);
  row("exact scan, hit query", peer, double(scan_right) / scan_seconds.size());
  std::cout << "semantic cache, " << o.n << " entries in one scope, one thread, HNSW M=" << o.hnsw.m
            << " ef_construction=" << o.hnsw.ef_construction << " ef_search=" << o.hnsw.ef_search << ", "
            << o.dimension << "-d " << o.storage << " rows; fill "
            << number(fill_s) << " s (" << o.fill_threads << " threads; estimated " << number(fill_1_thread_s)
            << " s on one thread, " << number(fill_threads_s) << " s on " << o.fill_threads << ")\n";
  results.print(std::cout);
  std::cout << "hit queries answered with their source's answer: " << right << " of " << o.lookups
            << "; vetoes " << statistics.vetoes << '\n';

  json_line line;
  line.add("bench", "cache_lookup")
      .add("entries", o.n)
      .add("p50_us", hit.p50_us)
      .add("p99_us", hit.p99_us)
      .add("cpu_p50_us", hit_cpu.p50_us)
      .add("cpu_p99_us", hit_cpu.p99_us)
      .add("miss_p50_us", miss.p50_us)
      .add("miss_p99_us", miss.p99_us)
      .add("hit_rate", double(hits) / o.lookups)
      .add("right_answer_rate", double(right) / o.lookups)
      .add("false_hit_rate", double(false_hits) / o.lookups)
      .add("flat_scan_p50_us", peer.p50_us)
      .add("vs_flat_scan", peer.p50_us / hit.p50_us)
      .add("fill_s", fill_s)
      .add("ef_search", o.hnsw.ef_search)
      .add("dim", o.dimension)
      .add("storage", o.storage);
  json_line verifier_line;
  verifier_line.add("bench", "cache_lookup_verifier")
      .add("entries", o.n)
      .add("verifier", model.fitted() ? "fitted" : "prior")
      .add("p50_us", verified.p50_us)
      .add("p99_us", verified.p99_us)
      .add("cpu_p50_us", verified_cpu.p50_us)
      .add("cpu_p99_us", verified_cpu.p99_us)
      .add("hit_rate", double(verified_hits) / o.lookups)
      .add("right_answer_rate", double(verified_right) / o.lookups)
      .add("p99_ratio_vs_default", verified.p99_us / hit.p99_us);
  json_line fill_line;
  fill_line.add("bench", "cache_fill")
      .add("entries", o.n)
      .add("threads", o.fill_threads)
      .add("fill_s", fill_s)
      .add("fill_s_1_thread", fill_1_thread_s)
      .add("fill_s_threads", fill_threads_s)
      .add("speedup", fill_1_thread_s / fill_threads_s)
      .add("storage", o.storage);
  publish("cache", results, {line, verifier_line, fill_line});
}

}  // namespace

int main(int argc, char** argv) {
  const auto parsed = parse(argc, argv);
  if (!parsed) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (parsed->storage == "int8")
    run<llmgate::simd::scaled_int8>(*parsed);
  else
    run<llmgate::simd::float16>(*parsed);
}
