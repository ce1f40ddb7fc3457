// The semantic cache: hits and misses, scope and conversation isolation,
// the guard, feedback, eviction and statistics.
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "llmgate/cache/semantic_cache.hpp"

using namespace llmgate;

namespace {

// A cache with a fixed threshold, so that the tests read what they decide.
template <class Guard = lexical_guard>
using test_cache = basic_semantic_cache<std::string, hashing_embedder, default_index_factory, lru_eviction,
                                        static_threshold, guarded_similarity<Guard>>;

template <class Guard = lexical_guard>
test_cache<Guard> make_cache(float threshold, std::size_t max_entries = 100000) {
  return test_cache<Guard>({.max_entries = max_entries}, hashing_embedder(), static_threshold{threshold});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(semantic_cache_test)

BOOST_AUTO_TEST_CASE(a_paraphrase_hits_and_an_unrelated_question_misses) {
  auto cache = make_cache(0.75f);
  const cache_scope scope;
  cache.insert(scope, "How do I reset my password?", "Use the 'forgot password' link.");
  const auto paraphrase = cache.lookup(scope, "how can I reset my password");
  BOOST_TEST_REQUIRE((paraphrase.outcome == lookup_outcome::hit));
  BOOST_TEST(*paraphrase.answer == "Use the 'forgot password' link.");
  BOOST_TEST(paraphrase.similarity >= 0.75f);
  const auto unrelated = cache.lookup(scope, "What is the capital of France?");
  BOOST_TEST((unrelated.outcome == lookup_outcome::miss));
  BOOST_TEST(!unrelated.answer);
}

BOOST_AUTO_TEST_CASE(the_same_text_in_another_scope_never_hits) {
  // Many tenants and models store answers to the same questions; every
  // lookup must come back with its own scope's answer or nothing.
  auto cache = make_cache(0.5f);
  const std::vector<std::string> questions = {"How many vacation days do I get?", "What is our refund policy?",
                                              "Who do I call when the VPN is down?", "Where is the office?"};
  std::vector<cache_scope> scopes;
  for (int tenant = 0; tenant < 12; ++tenant)
    for (const char* model : {"small", "large"})
      scopes.emplace_back(cache_scope_fields{.tenant = "tenant-" + std::to_string(tenant), .model = model});
  std::mt19937 generator(9);
  std::vector<std::size_t> order(scopes.size() * questions.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), generator);
  const auto answer_of = [&](std::size_t s, std::size_t q) { return std::to_string(s) + "/" + std::to_string(q); };
  std::size_t hits = 0;
  for (std::size_t i : order) {
    const std::size_t s = i / questions.size(), q = i % questions.size();
    const auto result = cache.lookup(scopes[s], questions[q] + " please");
    if (result.answer) {
      ++hits;
      BOOST_TEST_REQUIRE(result.answer->substr(0, result.answer->find('/')) == std::to_string(s));
    }
    cache.insert(scopes[s], questions[q], answer_of(s, q));
  }
  for (std::size_t s = 0; s < scopes.size(); ++s)
    for (std::size_t q = 0; q < questions.size(); ++q) {
      const auto result = cache.lookup(scopes[s], questions[q]);
      BOOST_TEST_REQUIRE((result.outcome == lookup_outcome::hit));
      BOOST_TEST(*result.answer == answer_of(s, q));
    }
  BOOST_TEST_MESSAGE("hits before insertion (within scope only): " << hits);
}

BOOST_AUTO_TEST_CASE(a_follow_up_hits_only_within_its_own_conversation) {
  const std::filesystem::path path = LLMGATE_SHARED_DATA_DIR "/multiturn/contextual_queries.json";
  if (!std::filesystem::exists(path)) {
    BOOST_TEST_MESSAGE("skipped: " << path << " is absent (evaluation data lives in ../shared/data)");
    return;
  }
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto conversations = boost::json::parse(text).as_array();
  auto cache = make_cache(0.7f);
  const cache_scope scope;
  std::size_t checked = 0;
  for (std::size_t c = 0; c < conversations.size(); ++c) {
    const auto& conversation = conversations[c].as_object();
    const auto text = [&](std::string_view key) {
      const auto& value = conversation.at(key);
      return value.is_string() ? std::string(value.get_string()) : std::string();
    };
    const std::vector<chat_message> turns = {{.role = "user", .content = text("Main Query")},
                                             {.role = "assistant", .content = text("Main Query Response")},
                                             {.role = "user", .content = text("Follow-Up Query")}};
    // The follow-up of this conversation must never be answered with
    // another conversation's follow-up answer.
    const auto before = cache.lookup(scope, turns);
    if (before.answer) BOOST_TEST(before.answer->rfind("conversation " + std::to_string(c) + ":", 0) == 0u);
    cache.insert(scope, std::span(turns).first(1), "conversation " + std::to_string(c) + ": main");
    cache.insert(scope, turns, "conversation " + std::to_string(c) + ": follow-up");
    const auto after = cache.lookup(scope, turns);
    BOOST_TEST_REQUIRE((after.outcome == lookup_outcome::hit));
    BOOST_TEST(*after.answer == "conversation " + std::to_string(c) + ": follow-up");
    ++checked;
  }
  BOOST_TEST(checked == conversations.size());
}

BOOST_AUTO_TEST_CASE(with_refresh_left_to_the_caller_inserts_keep_the_weights_until_refresh) {
  hashing_embedder::options_type learning;
  learning.first_refresh = 16;
  test_cache<> cache({.refresh_in_insert = false}, hashing_embedder(learning), static_threshold{0.99f});
  const cache_scope scope;
  std::vector<std::string> texts;
  for (int i = 0; i < 40; ++i)
    texts.push_back("question " + std::to_string(i) + " about the colour of sky number " + std::to_string(i * 7));
  BOOST_TEST(!cache.refresh());  // nothing observed yet: nothing due
  for (std::size_t i = 0; i < texts.size(); ++i) cache.insert(scope, texts[i], std::to_string(i));
  BOOST_TEST(cache.embedder().generation() == 0u);  // due since the 16th insert, and left alone

  BOOST_TEST(cache.refresh());
  BOOST_TEST(cache.embedder().generation() == 1u);
  BOOST_TEST(!cache.refresh());  // next due at twice the 40 documents
  // Every stored text was embedded again under the new weights: each finds itself.
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto found = cache.lookup(scope, texts[i]);
    BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
    BOOST_TEST(*found.answer == std::to_string(i));
  }
}

BOOST_AUTO_TEST_CASE(inserting_what_a_lookup_missed_embeds_the_request_once) {
  // The hashing embedder's vectors, with every embed() counted.
  struct counting_embedder {
    std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
    hashing_embedder inner;
    std::size_t dimension() const { return inner.dimension(); }
    std::error_code embed(std::string_view text, std::span<float> out) const {
      ++*calls;
      return inner.embed(text, out);
    }
  };
  counting_embedder embedder;
  const auto calls = embedder.calls;
  basic_semantic_cache<std::string, counting_embedder> cache(
      {}, std::move(embedder), static_threshold{0.9f});
  const cache_scope scope, other_scope(cache_scope_fields{.tenant = "other"});
  cache.insert(scope, "How do I cancel my subscription?", "Settings, then Billing.");
  cache.insert(other_scope, "How do I cancel my subscription?", "Ask your administrator.");
  BOOST_TEST(*calls == 2);

  auto missed = cache.lookup(scope, "Where can I download my invoices?");
  BOOST_TEST_REQUIRE((missed.outcome == lookup_outcome::miss));
  BOOST_TEST(*calls == 3);
  cache.insert(std::move(missed), scope, "Where can I download my invoices?", "Billing, then Invoices.");
  BOOST_TEST(*calls == 3);  // the lookup's vector was stored
  const auto again = cache.lookup(scope, "Where can I download my invoices?");
  BOOST_TEST_REQUIRE((again.outcome == lookup_outcome::hit));
  BOOST_TEST(*again.answer == "Billing, then Invoices.");
  BOOST_TEST(again.similarity > 0.99f);  // the text's own vector, as the int8 rows score it

  // Another text than the one looked up is embedded anew.
  auto other_text = cache.lookup(scope, "Is there a student discount?");
  BOOST_TEST_REQUIRE((other_text.outcome == lookup_outcome::miss));
  const int before = *calls;
  cache.insert(std::move(other_text), scope, "Which payment methods do you accept?", "Cards and PayPal.");
  BOOST_TEST(*calls == before + 1);
  const auto payment = cache.lookup(scope, "Which payment methods do you accept?");
  BOOST_TEST_REQUIRE((payment.outcome == lookup_outcome::hit));
  BOOST_TEST(*payment.answer == "Cards and PayPal.");
  BOOST_TEST(payment.similarity > 0.99f);
  BOOST_TEST((cache.lookup(scope, "Is there a student discount?").outcome == lookup_outcome::miss));

}

BOOST_AUTO_TEST_CASE(a_lookup_vector_from_weights_since_replaced_is_not_stored) {
  hashing_embedder::options_type learning;
  learning.first_refresh = 16;
  test_cache<> cache({.refresh_in_insert = false}, hashing_embedder(learning), static_threshold{0.99f});
  const cache_scope scope;
  for (int i = 0; i < 20; ++i)
    cache.insert(scope, "stored question " + std::to_string(i) + " about invoices and refunds", std::to_string(i));
  const std::string text = "when are refunds paid to the card used for the invoices";
  std::vector<float> old_weights(cache.embedder().dimension()), new_weights(old_weights.size());
  BOOST_TEST_REQUIRE(!cache.embedder().embed(text, old_weights));

  auto missed = cache.lookup(scope, text);
  BOOST_TEST_REQUIRE((missed.outcome == lookup_outcome::miss));
  BOOST_TEST_REQUIRE(cache.refresh());  // new weights between the lookup and the insert
  BOOST_TEST_REQUIRE(!cache.embedder().embed(text, new_weights));
  // The new weights move this text's vector: storing the old one would show.
  BOOST_TEST_REQUIRE(std::inner_product(old_weights.begin(), old_weights.end(), new_weights.begin(), 0.0f) < 0.99f);

  cache.insert(std::move(missed), scope, text, "within five days");
  const auto found = cache.lookup(scope, text);
  BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
  BOOST_TEST(*found.answer == "within five days");
  BOOST_TEST(found.similarity > 0.999f);
}

BOOST_AUTO_TEST_CASE(the_guard_vetoes_a_hit_with_other_numbers_and_counts_it) {
  auto guarded = make_cache(0.3f);
  auto unguarded = make_cache<no_guard>(0.3f);
  const cache_scope scope;
  guarded.insert(scope, "How many minutes are in 2 hours?", "120");
  unguarded.insert(scope, "How many minutes are in 2 hours?", "120");
  const auto vetoed = guarded.lookup(scope, "How many minutes are in 3 hours?");
  BOOST_TEST((vetoed.outcome == lookup_outcome::miss));
  BOOST_TEST(vetoed.vetoes == 1u);
  BOOST_TEST(guarded.statistics().vetoes == 1u);
  BOOST_TEST((unguarded.lookup(scope, "How many minutes are in 3 hours?").outcome == lookup_outcome::hit));
}

BOOST_AUTO_TEST_CASE(an_entry_reported_wrong_stops_serving_that_neighbourhood) {
  auto cache = make_cache(0.6f);
  const cache_scope scope;
  cache.insert(scope, "What is the best laptop for students?", "Laptop A");
  const auto first = cache.lookup(scope, "Which laptop is best for a student?");
  BOOST_TEST_REQUIRE((first.outcome == lookup_outcome::hit));
  cache.feedback(first, false);
  BOOST_TEST((cache.lookup(scope, "Which laptop is best for a student?").outcome == lookup_outcome::miss));
  // Closer requests than the one reported are still served.
  BOOST_TEST((cache.lookup(scope, "What is the best laptop for students?").outcome == lookup_outcome::hit));
  BOOST_TEST(cache.statistics().wrong_reports == 1u);
}

BOOST_AUTO_TEST_CASE(a_full_cache_evicts_the_least_recently_used_entry) {
  auto cache = make_cache(0.9f, 3);
  const cache_scope scope;
  cache.insert(scope, "alpha question about rivers", "a");
  cache.insert(scope, "beta question about mountains", "b");
  cache.insert(scope, "gamma question about deserts", "c");
  BOOST_TEST((cache.lookup(scope, "alpha question about rivers").outcome == lookup_outcome::hit));  // alpha is now recent
  cache.insert(scope, "delta question about oceans", "d");  // evicts beta
  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST((cache.lookup(scope, "beta question about mountains").outcome == lookup_outcome::miss));
  BOOST_TEST((cache.lookup(scope, "alpha question about rivers").outcome == lookup_outcome::hit));
  BOOST_TEST((cache.lookup(scope, "delta question about oceans").outcome == lookup_outcome::hit));
  BOOST_TEST(cache.statistics().evictions == 1u);
}

BOOST_AUTO_TEST_CASE(statistics_count_lookups_and_what_hits_saved) {
  auto cache = make_cache(0.9f);
  const cache_scope scope;
  cache.insert(scope, "Explain photosynthesis", "Plants turn light into sugar.",
               {.prompt_tokens = 10, .completion_tokens = 30, .usd = 0.002});
  for (int i = 0; i < 3; ++i) cache.lookup(scope, "Explain photosynthesis");
  cache.lookup(scope, "Something else entirely");
  const auto s = cache.statistics();
  BOOST_TEST(s.lookups == 4u);
  BOOST_TEST(s.hits == 3u);
  BOOST_TEST(s.misses == 1u);
  BOOST_TEST(s.tokens_saved == 120u);
  BOOST_TEST(s.usd_saved == 0.006, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(s.lookup_p99.count() > 0);
}

BOOST_AUTO_TEST_CASE(the_adaptive_threshold_comes_down_where_feedback_says_hits_are_right) {
  adaptive_threshold policy({.error_bound = 0.05f, .start_threshold = 0.99f, .min_feedback = 30});
  const hash128 scope{};
  BOOST_TEST((policy.decide(scope, 1, 0.93f) != threshold_decision::hit));
  // Neighbours at 0.92 and above were right, from 0.80 to 0.85 wrong: the
  // threshold comes down to where the wrong ones would push the error rate
  // of all hits above 5%.
  for (int i = 0; i < 200; ++i) policy.record(scope, 100 + i, 0.92f + 0.0003f * i, true);
  for (int i = 0; i < 100; ++i) policy.record(scope, 400 + i, 0.80f + 0.0005f * i, false);
  BOOST_TEST(policy.threshold() <= 0.921f);
  BOOST_TEST(policy.threshold() >= 0.845f);
  BOOST_TEST((policy.decide(scope, 1, 0.93f) == threshold_decision::hit));
  BOOST_TEST((policy.decide(scope, 1, 0.82f) != threshold_decision::hit));
}

BOOST_AUTO_TEST_CASE(an_entry_verified_right_serves_down_to_that_similarity) {
  adaptive_threshold policy({.start_threshold = 0.99f, .min_feedback = 30});
  const hash128 scope{};
  policy.record(scope, 7, 0.90f, true);  // too little feedback to move the global threshold
  BOOST_TEST(policy.threshold() == 0.99f);
  BOOST_TEST((policy.decide(scope, 7, 0.905f) == threshold_decision::hit));
  BOOST_TEST((policy.decide(scope, 8, 0.905f) != threshold_decision::hit));
  policy.forget(7);  // the handle may now name another entry
  BOOST_TEST((policy.decide(scope, 7, 0.905f) != threshold_decision::hit));
}

BOOST_AUTO_TEST_SUITE_END()
