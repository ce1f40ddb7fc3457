// The replay's own parts (examples/replay): the stream a pair file makes,
// the per-request records of one replay, the seeded sample of hits, and
// the names and CSV fields its files use.
#include <boost/test/unit_test.hpp>

#include <algorithm>    // std::ranges::is_sorted
#include <cmath>        // std::isnan
#include <cstdint>      // std::uint32_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "../../examples/replay/experiment.hpp"  // replay_once, replay_result, noting_verifier
#include "../../examples/replay/report.hpp"      // sample_hits, detail::csv_field
#include "../../examples/replay/stream_reader.hpp"  // stream_of_pairs

namespace {

using replay::decision;

const std::vector<llmgate::labelled_pair> pairs = {
    {"How do I learn Python?", "What is the best way to learn Python?", true},
    {"How do I learn Python?", "How do I learn Java?", false},
    {"What is the capital of France?", "what is the capital of france", false},  // one normal form
};

// A verifier that says `p` of every candidate and vetoes those it is told to.
struct fixed_verifier {
  using prepared_request = std::string_view;
  float p = 0.5f;
  std::string_view veto;

  prepared_request prepare(std::string_view request) const { return request; }
  float probability(const llmgate::hash128&, prepared_request, const llmgate::verification_candidate&) const {
    return p;
  }
  llmgate::veto_reason vetoes(prepared_request, const llmgate::verification_candidate& c) const {
    return c.stored == veto ? llmgate::veto_reason::numbers_differ : llmgate::veto_reason::none;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(replay_test)

BOOST_AUTO_TEST_CASE(a_pair_file_makes_clusters_by_label_and_normal_form) {
  const replay::replay_stream stream = replay::stream_of_pairs(pairs, "pairs", 100);
  BOOST_TEST(stream.requests.size() == 6u);
  BOOST_TEST(stream.answers == 3u);  // {learn Python x2}, {Java}, {capital x2}
  const auto answer = [&](std::string_view text) {
    for (const auto& r : stream.requests)
      if (r.text == text) return r.answer;
    BOOST_FAIL("not in the stream: " << text);
    return 0u;
  };
  BOOST_TEST(answer("How do I learn Python?") == answer("What is the best way to learn Python?"));
  BOOST_TEST(answer("How do I learn Python?") != answer("How do I learn Java?"));
  BOOST_TEST(answer("What is the capital of France?") == answer("what is the capital of france"));
  // Each pair's first question comes before its second.
  BOOST_TEST(stream.requests.front().text == "How do I learn Python?");
  // A limit takes the first pairs, rounded up, then cuts the stream.
  const auto cut = replay::stream_of_pairs(pairs, "pairs", 3);
  BOOST_TEST(cut.requests.size() == 3u);
}

BOOST_AUTO_TEST_CASE(records_say_what_each_request_met) {
  // Served by the verifier at any similarity: each request after the
  // first hits the stored one (or the exact tier holds it).
  const replay::replay_stream stream{"stream",
                                     {""},
                                     {{0, 0, "How do I learn Python?"},
                                      {0, 0, "how do i learn python?"},
                                      {0, 1, "How do I learn Java?"},
                                      {0, 0, "What is the best way to learn Python?"}},
                                     2};
  const replay::replay_input input(stream, llmgate::default_index_factory{}.parameters);
  replay::progress_meter progress(3 * stream.requests.size());  // three replays
  const replay::replay_result r =
      replay::replay_once(input, llmgate::static_threshold{0.5f}, fixed_verifier{0.9f, {}}, 0.0f, 0.0, progress);
  BOOST_REQUIRE(r.records.size() == 4u);
  BOOST_TEST((r.records[0].made == decision::miss));
  BOOST_TEST(r.records[0].right);  // nothing stored: a miss is right
  BOOST_TEST(r.records[0].stored == replay::no_request);
  BOOST_TEST(std::isnan(r.records[0].similarity));
  BOOST_TEST((r.records[1].made == decision::exact));
  BOOST_TEST(r.records[1].stored == 0u);
  BOOST_TEST(r.records[1].right);
  BOOST_TEST((r.records[2].made == decision::hit));  // Java, served Python's answer
  BOOST_TEST(r.records[2].stored == 0u);
  BOOST_TEST(!r.records[2].right);
  BOOST_TEST(r.records[2].probability == 0.9f);
  BOOST_TEST((r.records[3].made == decision::hit));
  BOOST_TEST(r.records[3].right);
  BOOST_TEST(r.exact_hits == 1u);
  BOOST_TEST(r.semantic_hits == 2u);
  BOOST_TEST(r.right_hits == 2u);
  BOOST_TEST(r.answerable == 2u);  // the exact repeat and the last

  // Below the threshold nothing serves; the records keep the nearest.
  const replay::replay_result misses =
      replay::replay_once(input, llmgate::static_threshold{0.95f}, fixed_verifier{0.9f, {}}, 0.0f, 0.0, progress);
  BOOST_TEST((misses.records[2].made == decision::miss));
  BOOST_TEST(misses.records[2].stored == 0u);
  BOOST_TEST(misses.records[2].right);  // Java's answer was not stored
  BOOST_TEST(!misses.records[3].right);  // Python's was
  BOOST_TEST(misses.records[3].probability == 0.9f);

  // A veto is counted, and told right or wrong by the stored answer.
  const replay::replay_result vetoed = replay::replay_once(
      input, llmgate::static_threshold{0.5f}, fixed_verifier{0.9f, "How do I learn Python?"}, 0.0f, 0.0, progress);
  BOOST_TEST(vetoed.vetoes == 2u);       // Java's lookup and the last one's
  BOOST_TEST(vetoed.right_vetoes == 1u);  // the last one's
}

BOOST_AUTO_TEST_CASE(the_sample_of_hits_is_seeded) {
  replay::replay_result r;
  r.records.resize(50);
  for (std::size_t i = 0; i < r.records.size(); i += 2) r.records[i].made = decision::hit;
  const auto a = replay::sample_hits(r, 10, 7), b = replay::sample_hits(r, 10, 7);
  BOOST_TEST(a == b);
  BOOST_TEST(a.size() == 10u);
  BOOST_TEST(std::ranges::is_sorted(a));
  for (const std::uint32_t i : a) BOOST_TEST((r.records[i].made == decision::hit));
  BOOST_TEST(replay::sample_hits(r, 100, 7).size() == 25u);  // every hit, no more
}

BOOST_AUTO_TEST_CASE(configurations_are_named_for_people_and_files) {
  replay::replay_result r;
  r.policy = "verifier";
  r.threshold = 0.8;
  r.learning = false;
  BOOST_TEST(r.family() == "verifier + static, no learning");
  BOOST_TEST(r.configuration() == "verifier + static, no learning 0.80");
  BOOST_TEST(r.slug() == "verifier-static-no-learning-0.80");
  r.error_bound = 0.05;
  r.learning = true;
  BOOST_TEST(r.configuration() == "verifier + adaptive bound 0.05");
  BOOST_TEST(replay::detail::csv_field("say \"hi\", then go") == "\"say \"\"hi\"\", then go\"");
}

BOOST_AUTO_TEST_SUITE_END()
