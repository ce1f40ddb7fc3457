// rating_assignment: who rates which answer, and what a rater sees of it.
//
// Blind human rating: every answer a candidate gave to an evaluation prompt
// (the reference's too: people rate every model) goes to `per_answer`
// raters. Answers are dealt out candidate by candidate with one counter
// running across all of them, so that every rater gets about the same
// number of answers (loads differ by at most 1) and about the same share of
// each candidate's. Each rater's batch is then shuffled with a seed made
// from the rater's id, so that no two raters see the models in the same
// order and the order says nothing of the model.
//
// A rater never sees a request key (it names the candidate): the page and
// the CSV call an answer by an opaque id, a keyed hash of its key under a
// secret the run keeps in its store (rating_secret), so that the ids stay
// the same across restarts of the page and CSV round trips.
#pragma once

#include <charconv>      // std::from_chars
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint64_t
#include <cstdio>        // std::snprintf
#include <functional>    // std::function, std::less
#include <map>           // std::map
#include <random>        // std::mt19937_64, std::random_device
#include <set>           // std::set
#include <span>          // std::span
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::errc
#include <utility>       // std::move, std::swap
#include <vector>        // std::vector

#include "llmgate/detail/xxhash.hpp"         // XXH3_64bits_withSeed
#include "llmgate/error.hpp"                 // llmgate::error, errc
#include "llmgate/eval/run/run_records.hpp"  // request_result, planned_request
#include "llmgate/eval/run/run_store.hpp"    // run_store

namespace llmgate::inline v0 {

/// Whether people rate this result: an evaluation request that answered.
inline bool rateable(const request_result& result) noexcept {
  return result.ok() && result.request.kind == request_kind::evaluation;
}

/// A rater id: 1 to 64 letters, digits, '.', '_', '-' or '@'. It travels in
/// URLs, forms and CSV file names, so it is kept to what needs no escaping.
inline bool valid_rater_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > 64) return false;
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-' || c == '@';
    if (!ok) return false;
  }
  return true;
}

/// The answers one rater rates, by request key, in the order they are shown.
struct rater_batch {
  std::string rater;
  std::vector<std::string> request_keys;
};

namespace detail::rating {

// Fisher-Yates with the engine's raw output and a rejection-sampled bound:
// std::shuffle and std::uniform_int_distribution are free to differ between
// standard libraries, and a rater's order must not change with the compiler.
inline void shuffle_seeded(std::vector<std::string>& keys, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  for (std::size_t i = keys.size(); i > 1; --i) {
    const std::uint64_t bound = i;
    const std::uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % bound;
    std::uint64_t draw = engine();
    while (draw >= limit) draw = engine();
    std::swap(keys[i - 1], keys[static_cast<std::size_t>(draw % bound)]);
  }
}

}  // namespace detail::rating

/// The seed of a rater's order: a hash of the id, the same on every machine.
inline std::uint64_t rater_seed(std::string_view rater) noexcept {
  return XXH3_64bits_withSeed(rater.data(), rater.size(), 0);
}

/// Deals the rateable answers of `results` (in their order, grouped by
/// candidate in the order candidates first appear) to `raters`, each answer
/// to `per_answer` different raters; returns one batch per rater, in the
/// order of `raters`, each shuffled with rater_seed. Throws llmgate::error
/// (invalid_request) when there is no rater, an id is invalid or given
/// twice, or per_answer is 0 or more than the raters.
inline std::vector<rater_batch> assign_ratings(std::span<const request_result> results,
                                               std::span<const std::string> raters, std::size_t per_answer = 1) {
  if (raters.empty()) throw error(errc::invalid_request, "rating: no rater given");
  std::set<std::string_view> seen;
  for (const auto& rater : raters) {
    if (!valid_rater_id(rater))
      throw error(errc::invalid_request, "rating: rater id '" + rater +
                                             "' is not 1 to 64 letters, digits, '.', '_', '-' or '@'");
    if (!seen.insert(rater).second) throw error(errc::invalid_request, "rating: rater '" + rater + "' is given twice");
  }
  if (per_answer == 0 || per_answer > raters.size())
    throw error(errc::invalid_request, "rating: each answer must go to 1 to " + std::to_string(raters.size()) +
                                           " raters (one per rater at most), not " + std::to_string(per_answer));

  std::vector<std::string> candidates;
  std::map<std::string, std::vector<std::string>, std::less<>> answers;  // candidate -> its answers' keys
  for (const auto& result : results) {
    if (!rateable(result)) continue;
    auto [at, added] = answers.try_emplace(result.request.candidate);
    if (added) candidates.push_back(result.request.candidate);
    at->second.push_back(result.request.key);
  }

  std::vector<rater_batch> batches;
  for (const auto& rater : raters) batches.push_back({rater, {}});
  // Consecutive turns go to different raters, so an answer's per_answer
  // copies (per_answer <= raters) never land on the same one.
  std::size_t turn = 0;
  for (const auto& candidate : candidates)
    for (const auto& key : answers.find(candidate)->second)
      for (std::size_t copy = 0; copy < per_answer; ++copy) batches[turn++ % batches.size()].request_keys.push_back(key);
  for (auto& batch : batches) detail::rating::shuffle_seeded(batch.request_keys, rater_seed(batch.rater));
  return batches;
}

/// assign_ratings, kept in `store` so that every start of the rating page
/// (and every CSV import) sees the same batches: a rater who has a batch in
/// the store keeps it; the others get theirs from assign_ratings and it is
/// stored. Throws llmgate::error (invalid_request) as assign_ratings does,
/// and when the store holds a batch for a rater not in `raters` (the raters
/// are known up front: a changed list would deal the answers unevenly).
inline std::vector<rater_batch> assign_raters(run_store& store, std::span<const request_result> results,
                                              std::span<const std::string> raters, std::size_t per_answer = 1) {
  auto batches = assign_ratings(results, raters, per_answer);
  const std::set<std::string_view> given(raters.begin(), raters.end());
  for (const auto& known : store.raters())
    if (!given.contains(known))
      throw error(errc::invalid_request, "rating: the run store has a batch for rater '" + known +
                                             "', who is not among the raters given; give the same raters as before");
  for (auto& batch : batches) {
    auto stored = store.assignment(batch.rater);
    if (!stored.empty())
      batch.request_keys = std::move(stored);
    else
      store.put_assignment(batch.rater, batch.request_keys);
  }
  return batches;
}

/// An answer as a rater sees it.
struct rating_item {
  std::string id;           ///< opaque: what the page and the CSV call it
  std::string request_key;  ///< never shown to a rater
  std::string prompt;       ///< the question, as the program shows it
  std::string response;
};

/// The run's secret behind the item ids, kept in the store's meta
/// ("rating.secret", 16 hex digits); made from std::random_device the first time.
inline std::uint64_t rating_secret(run_store& store) {
  if (const auto known = store.meta("rating.secret")) {
    std::uint64_t secret = 0;
    const auto [end, failure] = std::from_chars(known->data(), known->data() + known->size(), secret, 16);
    if (failure != std::errc() || end != known->data() + known->size() || known->size() != 16)
      throw error(errc::invalid_request, "rating: the run store's rating.secret '" + *known + "' is not 16 hex digits");
    return secret;
  }
  std::random_device device;
  const std::uint64_t secret = (std::uint64_t{device()} << 32) ^ device();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(secret));
  store.set_meta("rating.secret", hex);
  return secret;
}

/// The rateable answers of a run under their opaque ids.
class rating_catalog {
 public:
  /// The text shown as an answer's question: the program renders its
  /// prompt (template and variables) as it was sent.
  using prompt_text = std::function<std::string(const planned_request&)>;

  /// Throws llmgate::error (invalid_request) in the unlikely case that two
  /// keys hash to the same id (another secret then separates them).
  rating_catalog(std::span<const request_result> results, std::uint64_t secret, const prompt_text& prompt_of) {
    for (const auto& result : results) {
      if (!rateable(result)) continue;
      const auto& key = result.request.key;
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx",
                    static_cast<unsigned long long>(XXH3_64bits_withSeed(key.data(), key.size(), secret)));
      if (by_key_.contains(key)) continue;  // a result listed twice
      if (by_id_.contains(std::string_view(hex)))
        throw error(errc::invalid_request, "rating: two answers have the same item id " + std::string(hex));
      by_id_.emplace(hex, items_.size());
      by_key_.emplace(key, items_.size());
      items_.push_back({hex, key, prompt_of(result.request), result.response});
    }
  }

  const rating_item* by_id(std::string_view id) const {
    const auto at = by_id_.find(id);
    return at == by_id_.end() ? nullptr : &items_[at->second];
  }
  const rating_item* by_key(std::string_view key) const {
    const auto at = by_key_.find(key);
    return at == by_key_.end() ? nullptr : &items_[at->second];
  }
  const std::vector<rating_item>& items() const noexcept { return items_; }
  std::size_t size() const noexcept { return items_.size(); }

 private:
  std::vector<rating_item> items_;
  std::map<std::string, std::size_t, std::less<>> by_id_;
  std::map<std::string, std::size_t, std::less<>> by_key_;
};

}  // namespace llmgate::inline v0
