// The semantic cache's verifier stage: the learned verifier that never
// learned decides as the cache did before verifiers, feedback moves only
// its own scope, what it learned survives a snapshot, and a bad weights
// file is refused.
#include <boost/test/unit_test.hpp>

#include <cmath>       // std::log
#include <cstddef>     // std::size_t
#include <filesystem>  // std::filesystem
#include <fstream>     // std::ofstream
#include <random>      // std::mt19937
#include <string>      // std::string, std::to_string
#include <vector>      // std::vector

#include "../temporary_directory.hpp"
#include "llmgate/cache/learned_verifier.hpp"
#include "llmgate/cache/semantic_cache.hpp"
#include "llmgate/error.hpp"

using namespace llmgate;

namespace {

template <class Verify>
using verified_cache = basic_semantic_cache<std::string, hashing_embedder, default_index_factory, lru_eviction,
                                            static_threshold, Verify>;

// Questions that come close in pairs and differ in what the guard looks
// at (numbers, negation, order) or in nothing that matters.
std::vector<std::string> near_duplicate_questions(std::size_t count, unsigned seed) {
  static const std::vector<std::string> things = {"train", "bus", "plane", "ferry", "bicycle", "car"};
  std::mt19937 draw(seed);
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string& a = things[draw() % things.size()];
    const std::string& b = things[draw() % things.size()];
    switch (draw() % 4) {
      case 0: texts.push_back("How many minutes are in " + std::to_string(draw() % 5 + 1) + " hours?"); break;
      case 1: texts.push_back("Is the " + a + " faster than the " + b + "?"); break;
      case 2: texts.push_back(std::string(draw() % 2 ? "Why is the " : "Why was the ") + a +
                              (draw() % 2 ? " not" : "") + " late today?"); break;
      default: texts.push_back("What is the cheapest way to take the " + a + " to the city?"); break;
    }
  }
  return texts;
}

float logit(float p) { return std::log(p / (1.0f - p)); }

}  // namespace

BOOST_AUTO_TEST_SUITE(verifier_test)

BOOST_AUTO_TEST_CASE(the_prior_that_never_learned_decides_as_the_guarded_similarity) {
  // The same stream through a cache as it was before verifiers and one
  // with the learned verifier's prior: every lookup ends alike.
  const auto texts = near_duplicate_questions(400, 3);
  for (const float threshold : {0.6f, 0.8f, 0.9f, 0.97f}) {
    verified_cache<guarded_similarity<>> before({}, hashing_embedder(), static_threshold{threshold});
    verified_cache<learned_verifier> prior({}, hashing_embedder(), static_threshold{threshold}, learned_verifier());
    const cache_scope scope;
    std::size_t hits = 0, vetoes = 0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const auto a = before.lookup(scope, texts[i]);
      const auto b = prior.lookup(scope, texts[i]);
      BOOST_TEST_REQUIRE((a.outcome == b.outcome));
      BOOST_TEST((a.answer == b.answer));
      BOOST_TEST(a.similarity == b.similarity);
      BOOST_TEST(a.probability == b.probability);
      BOOST_TEST(a.vetoes == b.vetoes);
      hits += a.outcome == lookup_outcome::hit;
      vetoes += a.vetoes;
      if (a.outcome != lookup_outcome::hit) {
        before.insert(scope, texts[i], std::to_string(i));
        prior.insert(scope, texts[i], std::to_string(i));
      }
    }
    BOOST_TEST_MESSAGE("threshold " << threshold << ": " << hits << " hits, " << vetoes << " vetoes");
    if (threshold == 0.8f) {
      BOOST_TEST(hits > 0u);    // the comparison saw both hits...
      BOOST_TEST(vetoes > 0u);  // ...and the guard at work
    }
  }
}

BOOST_AUTO_TEST_CASE(feedback_moves_only_its_own_scope) {
  learned_verifier verifier;
  const cache_scope tenant_a(cache_scope_fields{.tenant = "a"}), tenant_b(cache_scope_fields{.tenant = "b"});
  const verification_candidate candidate{"How do I reset my password?", 0.93f, 0};
  const auto request = verifier.prepare("how can I reset my password");
  BOOST_TEST(verifier.probability(tenant_a.hash(), request, candidate) == 0.93f);
  for (int i = 0; i < 200; ++i) verifier.learn(tenant_a.hash(), "how can I reset my password", candidate, false);
  BOOST_TEST(verifier.probability(tenant_a.hash(), request, candidate) < 0.5f);
  BOOST_TEST(verifier.probability(tenant_b.hash(), request, candidate) == 0.93f);  // untouched, exactly
  BOOST_TEST(verifier.scopes_learned() == 1u);
}

BOOST_AUTO_TEST_CASE(one_step_of_feedback_moves_the_scope_by_the_log_loss_gradient) {
  learned_verifier verifier({.learning_rate = 0.1f});
  const hash128 scope = cache_scope(cache_scope_fields{.tenant = "a"}).hash();
  const verification_candidate candidate{"Is the bus faster than the train?", 0.8f, 3};
  verifier.learn(scope, "Is the bus quicker than the train?", candidate, false);
  // From bias = slope = 0: the error is p - 0 = 0.8, so bias = -0.1 * 0.8 and
  // slope = -0.1 * 0.8 * logit(0.8) / 12 (the slope's step is scaled by the logit's bound).
  const float base = logit(0.8f), bias = -0.08f, slope = -0.08f * base / 12.0f;
  const float expected = 1.0f / (1.0f + std::exp(-(base + bias + slope * base)));
  BOOST_TEST(verifier.probability(scope, verifier.prepare("Is the bus quicker than the train?"), candidate) ==
                 expected,
             boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(a_run_of_feedback_stays_within_its_bound) {
  learned_verifier verifier({.learning_rate = 1.0f, .max_correction = 2.0f});
  const hash128 scope = cache_scope(cache_scope_fields{.tenant = "a"}).hash();
  const verification_candidate candidate{"What is the capital of France?", 0.9f, 0};
  for (int i = 0; i < 1000; ++i) verifier.learn(scope, "capital of France?", candidate, false);
  // The bias stops at -2 and the slope at -0.9 (1 + slope stays positive,
  // so the base's order holds): logit(0.9) * 0.1 - 2.
  const float least = 1.0f / (1.0f + std::exp(-(0.1f * logit(0.9f) - 2.0f)));
  BOOST_TEST(verifier.probability(scope, verifier.prepare("capital of France?"), candidate) == least,
             boost::test_tools::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(scopes_beyond_the_bound_do_not_learn) {
  learned_verifier verifier({.max_scopes = 2});
  const verification_candidate candidate{"a question", 0.9f, 0};
  for (const char* tenant : {"a", "b", "c"})
    verifier.learn(cache_scope(cache_scope_fields{.tenant = tenant}).hash(), "a question", candidate, false);
  BOOST_TEST(verifier.scopes_learned() == 2u);
  const hash128 third = cache_scope(cache_scope_fields{.tenant = "c"}).hash();
  BOOST_TEST(verifier.probability(third, verifier.prepare("a question"), candidate) == 0.9f);
}

BOOST_AUTO_TEST_CASE(a_verifier_that_does_not_learn_ignores_feedback) {
  learned_verifier verifier({.learn = false});
  const hash128 scope = cache_scope(cache_scope_fields{.tenant = "a"}).hash();
  const verification_candidate candidate{"a question", 0.9f, 0};
  verifier.learn(scope, "a question", candidate, false);
  BOOST_TEST(verifier.scopes_learned() == 0u);
  BOOST_TEST(verifier.probability(scope, verifier.prepare("a question"), candidate) == 0.9f);
}

BOOST_AUTO_TEST_CASE(the_cache_teaches_its_verifier_in_the_lookups_scope_only) {
  // Wrong answers reported by tenant a make a's near neighbours miss;
  // tenant b, with the same entries, keeps hitting.
  verified_cache<learned_verifier> cache({}, hashing_embedder(), static_threshold{0.7f}, learned_verifier());
  const cache_scope a(cache_scope_fields{.tenant = "a"}), b(cache_scope_fields{.tenant = "b"});
  for (const cache_scope* scope : {&a, &b}) cache.insert(*scope, "How do I reset my password?", "forgot link");
  for (int i = 0; i < 60; ++i) {
    const auto found = cache.lookup(a, "how can I reset my password");
    if (found.outcome != lookup_outcome::hit) break;
    cache.feedback(found, false);
    // A wrong report also stops the entry at that similarity: store it again.
    cache.insert(a, "How do I reset my password?", "forgot link");
  }
  BOOST_TEST((cache.lookup(a, "how can I reset my password").outcome == lookup_outcome::miss));
  const auto other = cache.lookup(b, "how can I reset my password");
  BOOST_TEST((other.outcome == lookup_outcome::hit));
  BOOST_TEST(other.probability == other.similarity);  // b's verdicts are the prior's, exactly
  BOOST_TEST(cache.verifier().scopes_learned() == 1u);
}

BOOST_AUTO_TEST_CASE(what_the_verifier_learned_survives_a_snapshot) {
  llmgate::test::temporary_directory directory;
  const auto path = directory.path() / "semantic.snapshot";
  const cache_scope a(cache_scope_fields{.tenant = "a"});
  verified_cache<learned_verifier> cache({}, hashing_embedder(), static_threshold{0.7f}, learned_verifier());
  cache.insert(a, "How do I reset my password?", "forgot link");
  const auto found = cache.lookup(a, "how can I reset my password");
  BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
  cache.feedback(found, true);
  BOOST_TEST_REQUIRE(!cache.save(path));

  const auto loaded = verified_cache<learned_verifier>::load(path, {}, hashing_embedder(), static_threshold{0.7f});
  BOOST_TEST(loaded.verifier().scopes_learned() == 1u);
  const verification_candidate candidate{"How do I reset my password?", 0.8f, 1};
  const auto request = cache.verifier().prepare("how can I reset my password");
  BOOST_TEST(loaded.verifier().probability(a.hash(), request, candidate) ==
             cache.verifier().probability(a.hash(), request, candidate));
  BOOST_TEST(loaded.verifier().probability(a.hash(), request, candidate) != 0.8f);
}

BOOST_AUTO_TEST_CASE(a_corrupt_weights_file_is_refused_naming_it) {
  llmgate::test::temporary_directory directory;
  const auto path = directory.path() / "broken.weights";
  std::ofstream(path, std::ios::binary) << "LLMGATE\x1a not really a weights file";
  try {
    (void)learned_verifier::load(path);
    BOOST_FAIL("a corrupt weights file was accepted");
  } catch (const llmgate::error& e) {
    BOOST_TEST(std::string(e.what()).find(path.string()) != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_SUITE_END()
