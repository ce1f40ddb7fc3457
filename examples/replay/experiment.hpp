// One replay: the whole stream, in order, through a fresh exact cache and
// semantic cache, exactly as the reference experiment did. Each request
// goes to the exact tier first, then to the semantic cache; a miss or an
// explore is answered by the "LLM" (the dataset's own answer) and stored
// in both tiers. Nothing is ever evicted.
#pragma once

#include <algorithm>      // std::sort, std::max, std::ranges::max_element
#include <atomic>         // std::atomic
#include <chrono>         // std::chrono::steady_clock
#include <cstddef>        // std::size_t
#include <cstdint>        // std::uint32_t, std::uint64_t
#include <cstdio>         // std::fprintf, std::snprintf
#include <ctime>          // clock_gettime, CLOCK_THREAD_CPUTIME_ID (POSIX)
#include <limits>         // std::numeric_limits
#include <optional>       // std::optional
#include <random>         // std::mt19937_64
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <type_traits>    // std::is_same_v
#include <unordered_map>  // text -> stored request
#include <unordered_set>  // answers stored so far
#include <utility>        // std::move
#include <vector>         // std::vector

#include <llmgate/cache/exact_cache.hpp>
#include <llmgate/cache/guard.hpp>
#include <llmgate/cache/scope.hpp>
#include <llmgate/cache/semantic_cache.hpp>
#include <llmgate/cache/threshold.hpp>
#include <llmgate/cache/verifier.hpp>
#include <llmgate/embed/hashing_embedder.hpp>
#include <llmgate/embed/text.hpp>
#include <llmgate/index/hnsw_index.hpp>

#include "stream_reader.hpp"

namespace replay {

/// The exact tier's normal form: Unicode case folding and white space
/// collapsed. Punctuation and symbols stay, so "What is C#?" and "What is
/// C++?" remain two requests.
struct case_folding_normalizer {
  std::string operator()(std::string_view text) const {
    return llmgate::normalize_text(text, {.collapse_whitespace = true, .case_fold = true});
  }
};

/// The exact tier stores the index of the request whose answer it holds.
using exact_tier = llmgate::exact_cache<std::uint32_t, llmgate::lru_eviction, case_folding_normalizer>;

/// What a verifier was asked during one lookup.
struct verifier_notes {
  struct candidate {
    std::string_view stored;  ///< the cache's copy of the stored request's text
    float similarity, probability;
  };
  std::vector<candidate> candidates;     ///< given a probability, closest first
  std::vector<std::string_view> vetoed;  ///< vetoed after the threshold accepted them

  void clear() {
    candidates.clear();
    vetoed.clear();
  }
};

/// A verifier that notes each candidate it gives a probability and each
/// veto, so that the replay can record the nearest stored request of
/// every lookup, and tell for each veto whether it kept a wrong answer out
/// or a right one: what the vetoes gain, measured in every replay rather
/// than by a replay without them. One replay, one thread: the notes need
/// no lock.
template <llmgate::Verifier V>
struct noting_verifier {
  using prepared_request = typename V::prepared_request;

  V inner;
  verifier_notes* notes;

  prepared_request prepare(std::string_view request) const { return inner.prepare(request); }

  float probability(const llmgate::hash128& scope, const prepared_request& request,
                    const llmgate::verification_candidate& candidate) const {
    const float p = inner.probability(scope, request, candidate);
    notes->candidates.push_back({candidate.stored, candidate.similarity, p});
    return p;
  }

  llmgate::veto_reason vetoes(const prepared_request& request, const llmgate::verification_candidate& candidate) const {
    const llmgate::veto_reason reason = inner.vetoes(request, candidate);
    if (reason != llmgate::veto_reason::none) notes->vetoed.push_back(candidate.stored);
    return reason;
  }

  void learn(const llmgate::hash128& scope, std::string_view request, const llmgate::verification_candidate& candidate,
             bool correct)
    requires llmgate::LearningVerifier<V>
  {
    inner.learn(scope, request, candidate, correct);
  }
};

/// The verifier of the similarity policies: the similarity behind the
/// lexical guard, as the cache decides by default.
using similarity_verifier = llmgate::guarded_similarity<llmgate::lexical_guard>;

/// The semantic tier stores the index of the request whose answer it holds.
template <class Threshold, class Verify>
using semantic_tier = llmgate::basic_semantic_cache<std::uint32_t, llmgate::hashing_embedder,
                                                    llmgate::default_index_factory, llmgate::lru_eviction,
                                                    Threshold, noting_verifier<Verify>>;

/// Microseconds of CPU time the calling thread has used. Lookups are timed
/// with it rather than with a wall clock so that time the thread spends
/// descheduled (other processes, the other replays) does not count: on a
/// busy machine a wall clock turns every preemption into a lookup of
/// milliseconds.
inline double thread_cpu_us() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) * 1e-3;
}

/// What one request's lookup decided.
enum class decision : std::uint8_t { exact, hit, explore, miss };

inline const char* name_of(decision d) {
  switch (d) {
    case decision::exact: return "exact";
    case decision::hit: return "hit";
    case decision::explore: return "explore";
    case decision::miss: return "miss";
  }
  return "?";
}

/// No request: a record with no stored request behind its decision.
inline constexpr std::uint32_t no_request = ~std::uint32_t{0};

/// One request of one replay, for the records CSV and the sample of hits.
struct request_record {
  /// The stored request behind the decision (index into the stream): the
  /// one served or explored; on a miss the nearest one the verifier was
  /// asked about, if any (none below the prefilter similarity).
  std::uint32_t stored = no_request;
  /// The embedder's, request to `stored`; with no `stored` on a miss, to
  /// the nearest the search saw (none in an empty scope).
  float similarity = std::numeric_limits<float>::quiet_NaN();
  float probability = std::numeric_limits<float>::quiet_NaN();  ///< the verifier's, verifier policies only
  decision made = decision::miss;
  /// Exact, hit, explore: the answer served (explored) was the request's;
  /// miss: none stored in the request's scope was.
  bool right = false;
};

/// What one configuration is and what its replay measured.
struct replay_result {
  std::string policy;                 ///< "static", "adaptive" or "verifier"
  std::optional<double> error_bound;  ///< adaptive thresholds only
  double threshold = 0;               ///< the static one, or the adaptive policy's final learned one
  std::optional<bool> learning;       ///< verifier only: whether feedback taught it online

  std::size_t requests = 0;
  std::size_t exact_hits = 0, semantic_hits = 0;
  std::size_t right_hits = 0, right_semantic_hits = 0;
  std::size_t answerable = 0;  ///< requests whose right answer was already stored in their scope
  std::size_t explores = 0, feedback_reports = 0;
  std::size_t vetoes = 0;        ///< stored answers the threshold accepted and the guard refused
  std::size_t right_vetoes = 0;  ///< of those, the ones that were right after all
  std::vector<double> lookup_us;  ///< every semantic lookup (embed + search + guard), sorted
  double longest_insert_us = 0;   ///< the insert that re-embedded most (the embedder's refreshes)
  double seconds = 0;
  std::vector<request_record> records;  ///< one per request, in stream order

  /// The policy's family: one curve of the precision/hit-rate plot.
  std::string family() const {
    std::string name = policy;
    if (policy == "verifier") name += error_bound ? " + adaptive" : " + static";
    if (learning == false) name += ", no learning";
    return name;
  }
  /// The configuration, for people: its family and its setting.
  std::string configuration() const {
    const auto number = [](const char* pattern, double v) {
      char text[32];
      std::snprintf(text, sizeof text, pattern, v);
      return std::string(text);
    };
    return family() + (error_bound ? number(" bound %.2f", *error_bound) : number(" %.2f", threshold));
  }
  /// The configuration, for file names.
  std::string slug() const {
    std::string s;
    for (const char c : configuration())
      if (c == ' ' || c == ',' || c == '+') {
        if (!s.empty() && s.back() != '-') s += '-';
      } else {
        s += c;
      }
    return s;
  }

  std::size_t hits() const { return exact_hits + semantic_hits; }
  double share(std::size_t n) const { return requests ? static_cast<double>(n) / requests : 0.0; }
  std::optional<double> precision() const {
    return hits() ? std::optional(static_cast<double>(right_hits) / hits()) : std::nullopt;
  }
  /// Of the semantic hits alone: what the adaptive policy's error bound is about.
  std::optional<double> semantic_precision() const {
    return semantic_hits ? std::optional(static_cast<double>(right_semantic_hits) / semantic_hits) : std::nullopt;
  }
  std::optional<double> recall() const {
    return answerable ? std::optional(static_cast<double>(right_hits) / answerable) : std::nullopt;
  }
  /// Nearest-rank percentile of the lookup times, in microseconds.
  double lookup_percentile_us(double quantile) const {
    if (lookup_us.empty()) return 0;
    const auto rank = static_cast<std::size_t>(quantile * static_cast<double>(lookup_us.size() - 1) + 0.5);
    return lookup_us[rank];
  }
};

/// Prints a line on stderr each time all the replays together pass another
/// 10% of their requests.
class progress_meter {
 public:
  explicit progress_meter(std::size_t total) : total_(total) {}

  void advance(std::size_t requests) {
    const std::size_t before = done_.fetch_add(requests);
    const std::size_t after = before + requests;
    if (after * 10 / total_ != before * 10 / total_)
      std::fprintf(stderr, "replay: %3zu%% (%zu of %zu requests, %.1f s)\n", after * 100 / total_, after, total_,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
  }

 private:
  std::size_t total_;
  std::atomic<std::size_t> done_{0};
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

/// What every replay shares: the stream, its scopes and its exact-tier keys
/// (normalised once, not once per replay), and how the semantic tier builds
/// its HNSW graphs and how many neighbours a lookup examines.
struct replay_input {
  const replay_stream& stream;
  llmgate::hnsw_parameters graph;
  std::size_t neighbours;
  std::vector<llmgate::cache_scope> scopes;
  std::vector<llmgate::exact_key> keys;

  replay_input(const replay_stream& s, llmgate::hnsw_parameters graph_parameters,
               std::size_t neighbours_per_lookup = llmgate::semantic_cache_options{}.neighbours)
      : stream(s), graph(graph_parameters), neighbours(neighbours_per_lookup) {
    for (const auto& name : s.scopes) scopes.emplace_back(llmgate::cache_scope_fields{.tenant = name});
    const exact_tier keying({.max_entries = 1, .shards = 1});
    keys.reserve(s.requests.size());
    for (const auto& r : s.requests) keys.push_back(keying.make_key(scopes[r.scope], r.text));
  }
};

/// Replays the stream through a fresh pair of tiers, the semantic one
/// deciding with `verifier` and `threshold`, putting to the verifier the
/// stored requests at least `prefilter` similar. A share `feedback_rate` of the
/// semantic hits (drawn by a generator seeded the same for every replay)
/// have their rightness reported through feedback(), as users flagging
/// answers would; explores are always reported, since the fresh answer
/// they fetch shows whether the cached one was right.
template <class Threshold, llmgate::Verifier Verify>
replay_result replay_once(const replay_input& input, Threshold threshold, Verify verifier, float prefilter,
                          double feedback_rate, progress_meter& progress) {
  using clock = std::chrono::steady_clock;
  // The similarity policies' probability is the similarity: not recorded twice.
  constexpr bool records_probability = !std::is_same_v<Verify, similarity_verifier>;
  const auto started = clock::now();
  const auto& requests = input.stream.requests;
  verifier_notes notes;
  exact_tier exact({.max_entries = requests.size() + 1, .max_bytes = std::size_t{1} << 40, .shards = 1});
  semantic_tier<Threshold, Verify> semantic(
      {.max_entries = requests.size() + 1, .neighbours = input.neighbours, .prefilter_similarity = prefilter},
      llmgate::hashing_embedder(), std::move(threshold), noting_verifier<Verify>{std::move(verifier), &notes}, {}, {},
      llmgate::default_index_factory{input.graph});
  std::mt19937_64 feedback_draw(7);
  std::unordered_set<std::uint64_t> stored;  // (scope << 32 | answer) of every stored answer
  // Per scope, the request stored with each text, for the candidates noted
  // (the texts are the stream's, which outlives the replay).
  std::vector<std::unordered_map<std::string_view, std::uint32_t>> stored_request(input.scopes.size());

  replay_result r;
  r.requests = requests.size();
  r.lookup_us.reserve(requests.size());
  r.records.resize(requests.size());
  constexpr std::size_t progress_step = 4096;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if ((i + 1) % progress_step == 0) progress.advance(progress_step);
    const request& q = requests[i];
    request_record& record = r.records[i];
    const std::uint64_t scoped_answer = std::uint64_t{q.scope} << 32 | q.answer;
    const bool answerable = stored.contains(scoped_answer);
    r.answerable += answerable;

    if (const auto earlier = exact.find(input.keys[i])) {
      ++r.exact_hits;
      record = {.stored = *earlier, .made = decision::exact, .right = requests[*earlier].answer == q.answer};
      r.right_hits += record.right;
      continue;
    }
    notes.clear();
    const double lookup_started = thread_cpu_us();
    auto found = semantic.lookup(input.scopes[q.scope], q.text);
    r.lookup_us.push_back(thread_cpu_us() - lookup_started);
    const auto& stored_here = stored_request[q.scope];
    for (const std::string_view text : notes.vetoed) r.right_vetoes += requests[stored_here.at(text)].answer == q.answer;
    r.vetoes += notes.vetoed.size();
    if (found.outcome != llmgate::lookup_outcome::miss) {
      record.stored = *found.answer;
      record.similarity = found.similarity;
      if (records_probability) record.probability = found.probability;
      record.right = requests[record.stored].answer == q.answer;
    } else if (!notes.candidates.empty()) {  // the nearest the verifier was asked about
      const auto& nearest = *std::ranges::max_element(notes.candidates, {}, &verifier_notes::candidate::similarity);
      record.stored = stored_here.at(nearest.stored);
      record.similarity = nearest.similarity;
      if (records_probability) record.probability = nearest.probability;
    } else if (!stored_here.empty()) {
      record.similarity = found.similarity;  // the nearest seen, of none the verifier was asked about
    }
    if (found.outcome == llmgate::lookup_outcome::hit) {
      record.made = decision::hit;
      ++r.semantic_hits;
      r.right_hits += record.right;
      r.right_semantic_hits += record.right;
      // 53 random bits as a fraction in [0, 1).
      if (static_cast<double>(feedback_draw() >> 11) * 0x1p-53 < feedback_rate) {
        semantic.feedback(found, record.right);
        ++r.feedback_reports;
      }
      continue;
    }
    if (found.outcome == llmgate::lookup_outcome::explore) {
      record.made = decision::explore;
      ++r.explores;
      semantic.feedback(found, record.right);
      ++r.feedback_reports;
    } else {
      record.right = !answerable;
    }
    // The LLM answers: the dataset's own answer, stored in both tiers.
    const auto index = static_cast<std::uint32_t>(i);
    exact.insert(input.keys[i], index);
    const double insert_started = thread_cpu_us();
    semantic.insert(std::move(found), input.scopes[q.scope], q.text, index);
    r.longest_insert_us = std::max(r.longest_insert_us, thread_cpu_us() - insert_started);
    stored.insert(scoped_answer);
    stored_request[q.scope].emplace(q.text, index);
  }
  progress.advance(requests.size() % progress_step);

  if constexpr (std::is_same_v<Threshold, llmgate::static_threshold>)
    r.threshold = semantic.threshold_policy().threshold;
  else
    r.threshold = semantic.threshold_policy().threshold();  // the one it learned
  std::sort(r.lookup_us.begin(), r.lookup_us.end());
  r.seconds = std::chrono::duration<double>(clock::now() - started).count();
  return r;
}

}  // namespace replay
