// external_embedder: it never embeds, and a semantic cache built on it
// works end to end with vectors that always come from its caller.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "llmgate/cache/semantic_cache.hpp"
#include "llmgate/embed/external_embedder.hpp"
#include "../temporary_directory.hpp"

using namespace llmgate;

namespace {

using external_cache = basic_semantic_cache<std::string, external_embedder>;

// Stands for the remote embedder the caller awaits.
std::vector<float> remote_vector(const hashing_embedder& remote, std::string_view text) {
  std::vector<float> values(remote.dimension());
  BOOST_TEST_REQUIRE(!remote.embed(text, values));
  return values;
}

// search() with the caller's vector, then insert() of a miss, as a gateway does.
semantic_lookup<std::string> ask(external_cache& cache, const hashing_embedder& remote, const cache_scope& scope,
                                 const std::string& text) {
  const cache_key key = cache.key(scope, text);
  auto found = cache.search(key, looked_up_vector::of(key.text, remote_vector(remote, key.text)));
  if (found.outcome == lookup_outcome::miss) cache.insert(semantic_lookup<std::string>(found), key, "answer to " + text);
  return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(external_embedder_test)

BOOST_AUTO_TEST_CASE(it_knows_its_dimension_and_never_embeds) {
  const external_embedder embedder(256);
  BOOST_TEST(embedder.dimension() == 256u);
  std::vector<float> out(256, 0.5f);
  const std::error_code ec = embedder.embed("hello", out);
  BOOST_TEST((ec == errc::not_supported));
  BOOST_TEST(ec.message() == "operation not supported by this object");
  BOOST_TEST(out[0] == 0.5f);  // left alone
}

BOOST_AUTO_TEST_CASE(a_cache_on_vectors_from_outside_hits_misses_and_stores) {
  const hashing_embedder remote;
  external_cache cache({}, external_embedder(remote.dimension()), static_threshold{0.8f});
  const cache_scope scope({.tenant = "a"}), other({.tenant = "b"});
  BOOST_TEST((ask(cache, remote, scope, "How do I reset my password?").outcome == lookup_outcome::miss));
  BOOST_TEST((ask(cache, remote, scope, "Where do I download invoices?").outcome == lookup_outcome::miss));
  BOOST_TEST(cache.size() == 2u);

  const auto paraphrase = ask(cache, remote, scope, "how can I reset my password");
  BOOST_TEST_REQUIRE((paraphrase.outcome == lookup_outcome::hit));
  BOOST_TEST(*paraphrase.answer == "answer to How do I reset my password?");
  BOOST_TEST((ask(cache, remote, other, "How do I reset my password?").outcome == lookup_outcome::miss));
  BOOST_TEST(cache.size() == 3u);

  // Without a vector from outside nothing can be found: lookup() cannot
  // embed, and an insert without a search's vector is stored, never found.
  BOOST_TEST((cache.lookup(scope, "How do I reset my password?").outcome == lookup_outcome::miss));
  cache.insert(scope, "What is the refund policy?", "30 days");
  BOOST_TEST(cache.size() == 4u);
  BOOST_TEST((ask(cache, remote, scope, "What is the refund policy?").outcome == lookup_outcome::miss));
  BOOST_TEST(cache.size() == 5u);  // that miss stored it again, this time with its vector
  BOOST_TEST((ask(cache, remote, scope, "What is the refund policy?").outcome == lookup_outcome::hit));

  // Wrong feedback through the cache works as with any embedder.
  const auto again = ask(cache, remote, scope, "Where do I download invoices?");
  BOOST_TEST_REQUIRE((again.outcome == lookup_outcome::hit));
  cache.feedback(again, false);
  BOOST_TEST(cache.statistics().wrong_reports == 1u);
}

BOOST_AUTO_TEST_CASE(a_saved_cache_loads_and_answers_from_outside_vectors) {
  const hashing_embedder remote;
  llmgate::test::temporary_directory directory;
  const cache_scope scope;
  {
    external_cache cache({}, external_embedder(remote.dimension()), static_threshold{0.8f});
    ask(cache, remote, scope, "How do I reset my password?");
    BOOST_TEST_REQUIRE(!cache.save(directory / "external"));
  }
  auto loaded = external_cache::load(directory / "external", {}, external_embedder(remote.dimension()),
                                     static_threshold{0.8f});
  const auto found = ask(loaded, remote, scope, "how can I reset my password");
  BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
  BOOST_TEST(*found.answer == "answer to How do I reset my password?");
}

BOOST_AUTO_TEST_SUITE_END()
