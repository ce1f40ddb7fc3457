// The semantic cache's lookup in steps: key(), embed() with no lock held,
// search(). Searching with embed()'s vector finds what lookup() finds; a
// vector of replaced weights or of another text is embedded again; an
// empty one misses; the vector a search used is the one an insert stores.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "llmgate/cache/semantic_cache.hpp"
#include "../test_texts.hpp"

using namespace llmgate;

namespace {

void same_lookup(const semantic_lookup<std::string>& a, const semantic_lookup<std::string>& b) {
  BOOST_TEST((a.outcome == b.outcome));
  BOOST_TEST((a.answer == b.answer));
  BOOST_TEST(a.similarity == b.similarity);
  BOOST_TEST(a.entry == b.entry);
  BOOST_TEST(a.entry_serial == b.entry_serial);
  BOOST_TEST(a.vetoes == b.vetoes);
  BOOST_TEST((a.scope == b.scope));
}

// The hashing embedder with every embed() counted.
struct counting_embedder {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  hashing_embedder inner;
  std::size_t dimension() const { return inner.dimension(); }
  std::error_code embed(std::string_view text, std::span<float> out) const {
    ++*calls;
    return inner.embed(text, out);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(semantic_cache_two_step_test)

BOOST_AUTO_TEST_CASE(embed_then_search_finds_what_lookup_finds) {
  semantic_cache cache({}, hashing_embedder(), static_threshold{0.8f});
  const cache_scope scope({.tenant = "a"});
  const auto texts = llmgate::test::random_word_texts(50, 3);
  for (std::size_t i = 0; i < texts.size(); ++i) cache.insert(scope, texts[i], std::to_string(i));
  auto queries = texts;
  queries.push_back("How do I reset my password?");     // a miss
  queries.push_back(texts[7] + " please");              // near one
  for (const auto& query : queries) {
    const cache_key key = cache.key(scope, query);
    BOOST_TEST((key.scope == scope.hash()));
    BOOST_TEST(key.text == query);
    const auto stepwise = cache.search(key, cache.embed(key.text));
    same_lookup(stepwise, cache.lookup(scope, query));
  }
  // A chat request's key is the key policy's (the messages come without
  // the system prompt, which is part of the scope). A const char*: the
  // content type converts from it (a string, or a JSON value).
  const std::vector<chat_message> messages = {{"user", texts[3].c_str()}};
  const cache_key chat_key = cache.key(scope, messages);
  BOOST_TEST(chat_key.text == texts[3]);
  const auto chat = cache.search(chat_key, cache.embed(chat_key.text));
  same_lookup(chat, cache.lookup(scope, messages));
  BOOST_TEST((chat.outcome == lookup_outcome::hit));
  BOOST_TEST(*chat.answer == "3");
  BOOST_TEST(cache.statistics().lookups == 2 * queries.size() + 2);
}

BOOST_AUTO_TEST_CASE(a_vector_of_replaced_weights_is_embedded_again) {
  hashing_embedder::options_type learning;
  learning.first_refresh = 16;
  // No guard: the vector of another text is meant to find that text.
  basic_semantic_cache<std::string, hashing_embedder, default_index_factory, lru_eviction, static_threshold,
                       guarded_similarity<no_guard>>
      cache({.refresh_in_insert = false}, hashing_embedder(learning), static_threshold{0.99f});
  const cache_scope scope;
  const auto texts = llmgate::test::random_word_texts(20, 5);
  for (std::size_t i = 0; i < texts.size(); ++i) cache.insert(scope, texts[i], std::to_string(i));
  const cache_key key = cache.key(scope, texts[4]);

  // Labelled with the weights in use, a vector is searched as given: here
  // another stored text's, which finds that text.
  const looked_up_vector other = cache.embed(texts[9]);
  const auto as_given = cache.search(key, looked_up_vector::of(key.text, other.values, other.generation));
  BOOST_TEST_REQUIRE((as_given.outcome == lookup_outcome::hit));
  BOOST_TEST(*as_given.answer == "9");

  // Once the weights are replaced, the same vector is stale: the search
  // embeds the key's text under the new ones and finds it.
  const std::uint64_t before = cache.embedder().generation();
  BOOST_TEST_REQUIRE(cache.refresh());
  BOOST_TEST_REQUIRE(cache.embedder().generation() == before + 1);
  const auto stale = cache.search(key, looked_up_vector::of(key.text, other.values, before));
  BOOST_TEST_REQUIRE((stale.outcome == lookup_outcome::hit));
  BOOST_TEST(*stale.answer == "4");
  same_lookup(stale, cache.lookup(scope, texts[4]));
  // A stale vector of the text itself as well, kept for the insert under the new weights.
  const looked_up_vector old = looked_up_vector::of("a question never stored", cache.embed("a question never stored").values, before);
  auto missed = cache.search(cache.key(scope, "a question never stored"), old);
  BOOST_TEST_REQUIRE((missed.outcome == lookup_outcome::miss));
  BOOST_TEST(missed.request.generation == before + 1);
}

BOOST_AUTO_TEST_CASE(a_vector_of_another_text_is_embedded_again) {
  semantic_cache cache({}, hashing_embedder(), static_threshold{0.99f});
  const cache_scope scope;
  const auto texts = llmgate::test::random_word_texts(10, 8);
  for (std::size_t i = 0; i < texts.size(); ++i) cache.insert(scope, texts[i], std::to_string(i));
  const auto found = cache.search(cache.key(scope, texts[2]), cache.embed(texts[6]));
  BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
  BOOST_TEST(*found.answer == "2");
}

BOOST_AUTO_TEST_CASE(search_and_insert_embed_only_what_they_were_not_given) {
  counting_embedder embedder;
  const auto calls = embedder.calls;
  basic_semantic_cache<std::string, counting_embedder> cache({}, std::move(embedder), static_threshold{0.9f});
  const cache_scope scope;
  const cache_key key = cache.key(scope, "Where can I download my invoices?");
  auto vector = cache.embed(key.text);
  BOOST_TEST(*calls == 1);
  BOOST_TEST(vector.values.size() == cache.embedder().dimension());
  BOOST_TEST(vector.text_hash == looked_up_vector::hash_of(key.text));
  auto missed = cache.search(key, vector);  // an empty scope
  BOOST_TEST_REQUIRE((missed.outcome == lookup_outcome::miss));
  BOOST_TEST((missed.request.values == vector.values));
  cache.insert(std::move(missed), key, "Billing, then Invoices.");
  BOOST_TEST(*calls == 1);  // the search's vector was stored
  const auto found = cache.search(key, std::move(vector));
  BOOST_TEST(*calls == 1);
  BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
  BOOST_TEST(*found.answer == "Billing, then Invoices.");
  BOOST_TEST(found.request.values.empty());

  // An empty vector of the key's text says it could not be embedded: a
  // miss without embedding, and an entry stored that is never found.
  const cache_key unembedded = cache.key(scope, "Is there a student discount?");
  auto nothing = cache.search(unembedded, looked_up_vector::of(unembedded.text, {}));
  BOOST_TEST((nothing.outcome == lookup_outcome::miss));
  BOOST_TEST(*calls == 1);
  cache.insert(std::move(nothing), unembedded, "No.");
  BOOST_TEST(*calls == 1);
  BOOST_TEST(cache.size() == 2u);
  BOOST_TEST((cache.lookup(scope, unembedded.text).outcome == lookup_outcome::miss));
  BOOST_TEST(*calls == 2);

  // A default vector is of no text: embedded for the search.
  const auto embedded = cache.search(key, looked_up_vector{});
  BOOST_TEST((embedded.outcome == lookup_outcome::hit));
  BOOST_TEST(*calls == 3);
  // The same as the first entry of a scope: the scope gets no index (it
  // has nothing to search), and its lookups miss.
  const cache_scope other({.tenant = "other"});
  const cache_key first = cache.key(other, "Is there a student discount?");
  cache.insert(first, "Yes.");
  BOOST_TEST(*calls == 4);
  const cache_key never = cache.key(cache_scope({.tenant = "third"}), "Is there a student discount?");
  cache.insert(cache.search(never, looked_up_vector::of(never.text, {})), never, "Ask sales.");
  BOOST_TEST(*calls == 4);
  BOOST_TEST(cache.size() == 4u);
  BOOST_TEST((cache.search(never, looked_up_vector::of(never.text, {})).outcome == lookup_outcome::miss));
  BOOST_TEST((cache.lookup(cache_scope({.tenant = "third"}), never.text).outcome == lookup_outcome::miss));
  BOOST_TEST(*calls == 5);
  const auto answered = cache.lookup(other, first.text);
  BOOST_TEST_REQUIRE((answered.outcome == lookup_outcome::hit));
  BOOST_TEST(*answered.answer == "Yes.");
}

BOOST_AUTO_TEST_SUITE_END()
