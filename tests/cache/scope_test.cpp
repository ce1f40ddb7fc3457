// cache_scope: every field separates scopes, field boundaries cannot be
// forged, the hash is the same in every build (snapshots store it), and
// generation parameters read the same whenever they mean the same.
#include <boost/test/unit_test.hpp>

#include <string>

#include "llmgate/cache/scope.hpp"

using llmgate::cache_scope;
using llmgate::generation_parameters;

BOOST_AUTO_TEST_SUITE(scope_test)

BOOST_AUTO_TEST_CASE(every_field_separates_scopes) {
  const cache_scope base({.tenant = "acme", .model = "m", .parameters = "p", .system_prompt = "s"});
  BOOST_TEST((cache_scope({.tenant = "acme", .model = "m", .parameters = "p", .system_prompt = "s"})
                  .hash() == base.hash()));
  for (const cache_scope& other :
       {cache_scope({.tenant = "umbrella", .model = "m", .parameters = "p", .system_prompt = "s"}),
        cache_scope({.tenant = "acme", .model = "n", .parameters = "p", .system_prompt = "s"}),
        cache_scope({.tenant = "acme", .model = "m", .parameters = "q", .system_prompt = "s"}),
        cache_scope({.tenant = "acme", .model = "m", .parameters = "p", .system_prompt = "t"})}) {
    BOOST_TEST(!(other.hash() == base.hash()));
    BOOST_TEST(!(other == base));
  }
}

BOOST_AUTO_TEST_CASE(moving_text_across_a_field_boundary_changes_the_hash) {
  const cache_scope a({.tenant = "ab", .model = "c"});
  const cache_scope b({.tenant = "a", .model = "bc"});
  const cache_scope c({.tenant = "", .model = "abc"});
  BOOST_TEST(!(a.hash() == b.hash()));
  BOOST_TEST(!(b.hash() == c.hash()));
}

BOOST_AUTO_TEST_CASE(the_hash_is_the_same_in_every_build) {
  // Values fixed when the encoding was written: a change here means saved
  // caches no longer match their scopes, so the encoding's name must change.
  const cache_scope scope({.tenant = "acme", .model = "gpt-4o-mini",
                           .parameters = "temperature=0;", .system_prompt = "Be brief."});
  BOOST_TEST(scope.hash().low == 0xdb491e317c1d9111u);
  BOOST_TEST(scope.hash().high == 0x18136d11561f8d27u);
  BOOST_TEST(cache_scope().hash().low == 0x57fd2385feb8b135u);
}

// Short scopes are hashed from a buffer on the stack, long ones through a
// streaming XXH3 state: both give the hash of the whole encoding at once.
BOOST_AUTO_TEST_CASE(short_and_long_scopes_hash_as_their_whole_encoding) {
  const auto whole = [](const llmgate::cache_scope_fields& fields) {
    std::string encoded = "llmgate.scope.1";
    for (const std::string& field : {fields.tenant, fields.model, fields.parameters, fields.system_prompt}) {
      for (int byte = 0; byte < 8; ++byte) encoded += static_cast<char>((field.size() >> (8 * byte)) & 0xff);
      encoded += field;
    }
    const XXH128_hash_t hash = XXH3_128bits_withSeed(encoded.data(), encoded.size(), 0);
    return llmgate::hash128{hash.low64, hash.high64};
  };
  for (const std::size_t prompt : {0u, 9u, 900u, 945u, 946u, 1000u, 5000u, 100000u}) {
    const llmgate::cache_scope_fields fields{.tenant = "acme", .model = "gpt-4o-mini",
                                             .parameters = "temperature=0;",
                                             .system_prompt = std::string(prompt, 'x')};
    BOOST_TEST((llmgate::cache_scope(fields).hash() == whole(fields)), "system prompt of " << prompt);
  }
}

BOOST_AUTO_TEST_CASE(parameters_are_written_canonically) {
  generation_parameters p;
  p.temperature = 0.2;
  p.max_tokens = 256;
  p.stop = {"\n\n", "END"};
  p.response_format = "json_object";
  p.other["presence_penalty"] = "0.5";
  BOOST_TEST(p.canonical() ==
             "temperature=0.2;max_tokens=256;stop=2:\n\n;stop=3:END;"
             "response_format=11:json_object;other=16:presence_penalty;value=3:0.5;");

  generation_parameters q = p;
  q.stop = {"END", "\n\n"};  // the order of stop sequences does not change the answer
  BOOST_TEST(q.canonical() == p.canonical());

  generation_parameters zero, negative_zero;
  zero.temperature = 0.0;
  negative_zero.temperature = -0.0;
  BOOST_TEST(zero.canonical() == negative_zero.canonical());

  generation_parameters absent;
  BOOST_TEST(absent.canonical().empty());
  BOOST_TEST(absent.canonical() != zero.canonical());  // unset is not the provider's default

  // Text cannot pose as another field: it is written with its length.
  generation_parameters forged;
  forged.tools = "x;temperature=0.2";
  generation_parameters honest;
  honest.tools = "x";
  honest.temperature = 0.2;
  BOOST_TEST(forged.canonical() != honest.canonical());
}

BOOST_AUTO_TEST_SUITE_END()
