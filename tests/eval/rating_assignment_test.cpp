// Who rates what: every rateable answer to per_answer different raters,
// loads within 1, each batch shuffled by its rater's seed, kept in the run
// store; answers under opaque ids.
#include <boost/test/unit_test.hpp>

#include <algorithm>  // std::sort, std::count, std::is_permutation
#include <cstdio>     // std::snprintf
#include <map>        // std::map
#include <set>        // std::set
#include <string>     // std::string
#include <vector>     // std::vector

#include "llmgate/eval/rate/rating_assignment.hpp"  // assign_ratings, assign_raters, rating_catalog
#include "rating_fixture.hpp"                       // record_rating_run, rating_key, rating_candidates

using llmgate::test::rating_key;
namespace {

std::vector<std::string> sorted(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  return keys;
}

const std::string big = "big-hosted-model", q4 = "small-local-q4", q8 = "small-local-q8";

}  // namespace

BOOST_AUTO_TEST_SUITE(rating_assignment_test)

BOOST_AUTO_TEST_CASE(answers_are_dealt_candidate_by_candidate_one_rater_each) {
  auto store = llmgate::run_store::in_memory();
  const auto results = llmgate::test::record_rating_run(store, 3);
  const std::vector<std::string> raters = {"ann", "bob"};
  const auto batches = llmgate::assign_ratings(results, raters);
  BOOST_REQUIRE(batches.size() == 2u);
  BOOST_TEST(batches[0].rater == "ann");
  BOOST_TEST(batches[1].rater == "bob");
  // big 0 1 2, q4 0 1 2, q8 0 1 2 in turn to ann, bob, ann, bob...
  const std::vector<std::string> ann = sorted({rating_key(big, 0), rating_key(big, 2), rating_key(q4, 1),
                                               rating_key(q8, 0), rating_key(q8, 2)});
  const std::vector<std::string> bob = sorted({rating_key(big, 1), rating_key(q4, 0), rating_key(q4, 2), rating_key(q8, 1)});
  BOOST_TEST(sorted(batches[0].request_keys) == ann, boost::test_tools::per_element());
  BOOST_TEST(sorted(batches[1].request_keys) == bob, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(each_answer_goes_to_per_answer_different_raters_and_loads_differ_by_at_most_one) {
  auto store = llmgate::run_store::in_memory();
  const auto results = llmgate::test::record_rating_run(store, 5);  // 15 answers
  const std::vector<std::string> raters = {"r1", "r2", "r3", "r4"};
  const auto batches = llmgate::assign_ratings(results, raters, 2);
  BOOST_REQUIRE(batches.size() == 4u);
  // 30 copies over 4 raters, dealt in turn.
  BOOST_TEST(batches[0].request_keys.size() == 8u);
  BOOST_TEST(batches[1].request_keys.size() == 8u);
  BOOST_TEST(batches[2].request_keys.size() == 7u);
  BOOST_TEST(batches[3].request_keys.size() == 7u);
  std::map<std::string, std::set<std::string>> raters_of;
  std::map<std::string, std::map<std::string, int>> per_candidate;  // rater -> candidate -> answers
  for (const auto& batch : batches)
    for (const auto& key : batch.request_keys) {
      BOOST_TEST(raters_of[key].insert(batch.rater).second);  // never twice to one rater
      per_candidate[batch.rater][key.substr(11, key.find('/', 11) - 11)] += 1;
    }
  BOOST_TEST(raters_of.size() == 15u);
  for (const auto& [key, who] : raters_of) BOOST_TEST(who.size() == 2u, key);
  // Each candidate's 10 copies: turns 0-9, 10-19, 20-29.
  BOOST_TEST(per_candidate["r1"][big] == 3);
  BOOST_TEST(per_candidate["r1"][q4] == 2);
  BOOST_TEST(per_candidate["r1"][q8] == 3);
  BOOST_TEST(per_candidate["r3"][big] == 2);
  BOOST_TEST(per_candidate["r3"][q4] == 3);
  BOOST_TEST(per_candidate["r3"][q8] == 2);
}

BOOST_AUTO_TEST_CASE(only_answers_to_evaluation_prompts_are_rated) {
  auto store = llmgate::run_store::in_memory();
  const auto results = llmgate::test::record_rating_run(store, 2);
  BOOST_REQUIRE(results.size() == 10u);  // 6 answers, a failure, a warm-up, a schedule request, a judge's question
  const std::vector<std::string> raters = {"solo"};
  const auto batches = llmgate::assign_ratings(results, raters);
  BOOST_TEST(sorted(batches[0].request_keys) ==
                 sorted({rating_key(big, 0), rating_key(big, 1), rating_key(q4, 0), rating_key(q4, 1), rating_key(q8, 0),
                         rating_key(q8, 1)}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(each_batch_is_shuffled_by_its_raters_seed) {
  auto store = llmgate::run_store::in_memory();
  const auto results = llmgate::test::record_rating_run(store, 10);  // 30 answers
  const std::vector<std::string> raters = {"ann", "bob"};
  const auto once = llmgate::assign_ratings(results, raters, 2);  // both rate all 30
  const auto again = llmgate::assign_ratings(results, raters, 2);
  BOOST_TEST(once[0].request_keys == again[0].request_keys, boost::test_tools::per_element());
  BOOST_TEST(once[1].request_keys == again[1].request_keys, boost::test_tools::per_element());
  BOOST_TEST(sorted(once[0].request_keys) == sorted(once[1].request_keys), boost::test_tools::per_element());
  BOOST_TEST((once[0].request_keys != once[1].request_keys));  // other seeds, other orders
  std::vector<std::string> dealt;  // the order before the shuffle: by candidate, then prompt
  for (const auto& candidate : llmgate::test::rating_candidates)
    for (int p = 0; p < 10; ++p) dealt.push_back(rating_key(candidate, p));
  BOOST_TEST((once[0].request_keys != dealt));
  BOOST_TEST(llmgate::rater_seed("ann") == llmgate::rater_seed("ann"));
  BOOST_TEST(llmgate::rater_seed("ann") != llmgate::rater_seed("bob"));
  // The same rater and answers give the same order whoever else rates.
  const std::vector<std::string> ann_alone = {"ann"};
  BOOST_TEST(llmgate::assign_ratings(results, ann_alone)[0].request_keys == once[0].request_keys,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_rater_lists_are_refused) {
  auto store = llmgate::run_store::in_memory();
  const auto results = llmgate::test::record_rating_run(store, 1);
  const auto refused = [&](std::vector<std::string> raters, std::size_t per_answer, const std::string& message) {
    try {
      llmgate::assign_ratings(results, raters, per_answer);
      BOOST_ERROR("accepted: " << message);
    } catch (const llmgate::error& e) {
      BOOST_TEST(e.code() == llmgate::errc::invalid_request);
      BOOST_TEST(std::string(e.what()).find(message) != std::string::npos, e.what());
    }
  };
  refused({}, 1, "rating: no rater given");
  refused({"ann", "a b"}, 1, "rater id 'a b' is not 1 to 64 letters");
  refused({"ann", ""}, 1, "rater id '' is not");
  refused({std::string(65, 'x')}, 1, "is not 1 to 64 letters");
  refused({"ann", "bob", "ann"}, 1, "rater 'ann' is given twice");
  refused({"ann", "bob"}, 0, "to 1 to 2 raters (one per rater at most), not 0");
  refused({"ann", "bob"}, 3, "to 1 to 2 raters (one per rater at most), not 3");
  BOOST_TEST(llmgate::valid_rater_id("ann.lee_2-x@corp"));
  BOOST_TEST(!llmgate::valid_rater_id("ann/lee"));
  BOOST_TEST(!llmgate::valid_rater_id("é"));
}

BOOST_AUTO_TEST_CASE(batches_are_kept_in_the_store_across_starts) {
  auto store = llmgate::run_store::in_memory();
  const auto results = llmgate::test::record_rating_run(store, 3);
  const std::vector<std::string> raters = {"ann", "bob"};
  const auto first = llmgate::assign_raters(store, results, raters);
  BOOST_TEST(store.raters() == raters, boost::test_tools::per_element());
  BOOST_TEST(store.assignment("ann") == first[0].request_keys, boost::test_tools::per_element());
  BOOST_TEST(store.assignment("bob") == first[1].request_keys, boost::test_tools::per_element());

  // A later start keeps what is stored, even where a new deal would differ.
  const std::vector<std::string> kept = {rating_key(q8, 2), rating_key(big, 0)};
  store.put_assignment("bob", kept);
  const auto second = llmgate::assign_raters(store, results, raters);
  BOOST_TEST(second[0].request_keys == first[0].request_keys, boost::test_tools::per_element());
  BOOST_TEST(second[1].request_keys == kept, boost::test_tools::per_element());

  // A rater dropped from the list is refused.
  const std::vector<std::string> only_ann = {"ann"};
  BOOST_CHECK_EXCEPTION(llmgate::assign_raters(store, results, only_ann), llmgate::error, [](const llmgate::error& e) {
    return std::string(e.what()).find("a batch for rater 'bob', who is not among the raters given") != std::string::npos;
  });
}

BOOST_AUTO_TEST_CASE(answers_are_named_by_a_keyed_hash_of_their_key) {
  auto store = llmgate::run_store::in_memory();
  const auto results = llmgate::test::record_rating_run(store, 2);
  store.set_meta("rating.secret", "00000000000000ff");
  BOOST_TEST(llmgate::rating_secret(store) == 255u);

  const llmgate::rating_catalog catalog(results, 255, llmgate::test::rating_prompt);
  BOOST_TEST(catalog.size() == 6u);
  for (const auto& item : catalog.items()) {
    char expected[17];
    std::snprintf(expected, sizeof expected, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits_withSeed(item.request_key.data(), item.request_key.size(), 255)));
    BOOST_TEST(item.id == expected);
    for (const auto& candidate : llmgate::test::rating_candidates) BOOST_TEST(item.id.find(candidate) == std::string::npos);
    BOOST_TEST(catalog.by_id(item.id) == &item);
    BOOST_TEST(catalog.by_key(item.request_key) == &item);
  }
  const auto* first = catalog.by_key(rating_key(q4, 1));
  BOOST_REQUIRE(first);
  BOOST_TEST(first->response == llmgate::test::rating_answer(1, 1));
  BOOST_TEST(first->prompt == "Plan my day, list 1:\n- write, \"review\" & <ship>");
  BOOST_TEST(!catalog.by_key(rating_key(q4, 2)));  // the failed request
  BOOST_TEST(!catalog.by_id("0000000000000000"));

  const llmgate::rating_catalog other(results, 256, llmgate::test::rating_prompt);
  BOOST_TEST(other.by_key(rating_key(q4, 1))->id != first->id);

  // A result listed twice is one item.
  std::vector<llmgate::request_result> twice(results.begin(), results.end());
  twice.push_back(results.front());
  BOOST_TEST(llmgate::rating_catalog(twice, 255, llmgate::test::rating_prompt).size() == 6u);

  // A secret that is not 16 hex digits is refused, never read as another.
  for (const std::string bad : {"ff", "00000000000000fg", "000000000000000ff"}) {
    store.set_meta("rating.secret", bad);
    BOOST_CHECK_EXCEPTION(llmgate::rating_secret(store), llmgate::error, [&](const llmgate::error& e) {
      return std::string(e.what()).find("rating.secret '" + bad + "' is not 16 hex digits") != std::string::npos;
    });
  }

  // A new store makes a secret once and keeps it.
  auto fresh = llmgate::run_store::in_memory();
  const auto secret = llmgate::rating_secret(fresh);
  BOOST_TEST(llmgate::rating_secret(fresh) == secret);
  BOOST_TEST(fresh.meta("rating.secret")->size() == 16u);
}

BOOST_AUTO_TEST_SUITE_END()
