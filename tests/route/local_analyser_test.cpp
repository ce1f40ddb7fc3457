// The local analyser: text rules alone, labelled neighbours that outvote
// them, complexity, and the evidence of how models did on similar requests.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "llmgate/index/hnsw_index.hpp"
#include "llmgate/route/local_analyser.hpp"

using llmgate::labelled_example;
using llmgate::local_analyser;
using llmgate::prune_request_into;
using llmgate::read_request_features;
using llmgate::read_text_features;

namespace {

std::vector<labelled_example> support_tickets() {
  std::vector<labelled_example> examples;
  for (const auto* text : {"My invoice shows a double charge for the premium plan",
                           "I was charged twice on my invoice this month",
                           "Refund the double charge on my last invoice please"})
    examples.push_back({text, "billing", "support", 0.2f, {{"small", 1.0f}, {"large", 1.0f}}});
  for (const auto* text : {"The app crashes when I upload a large photo",
                           "Uploading a photo makes the app crash every time",
                           "Crash on photo upload since the last update"})
    examples.push_back({text, "bug_report", "support", 0.6f, {{"small", 0.0f}, {"large", 1.0f}}});
  return examples;
}

const llmgate::model_evidence* evidence_for(const llmgate::task_profile& task, std::string_view model) {
  for (const auto& e : task.evidence)
    if (e.model == model) return &e;
  return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(local_analyser_test)

BOOST_AUTO_TEST_CASE(text_rules_recognise_code_and_mathematics) {
  BOOST_TEST(read_text_features("Write a Python function that reverses a linked list").task_type == "coding");
  BOOST_TEST(read_text_features("Write a Python function that reverses a linked list").domain == "programming");
  BOOST_TEST(read_text_features("How many apples are left if Sam eats 3 of 12?").task_type == "math");
  BOOST_TEST(read_text_features("Translate 'good morning' into French").task_type == "translation");
  BOOST_TEST(read_text_features("Which drug dose is safe for a patient with kidney disease?").domain == "medicine");
  BOOST_TEST(read_text_features("hello there").task_type == "chat");
}

BOOST_AUTO_TEST_CASE(longer_requests_that_ask_for_reasoning_are_more_complex) {
  const float short_one = read_text_features("What time is it?").complexity;
  std::string long_one = "Explain step by step why the proof holds, and derive the bound. ";
  for (int i = 0; i < 40; ++i) long_one += "The sequence converges because each term is smaller than the last. ";
  BOOST_TEST(short_one < read_text_features(long_one).complexity);
  BOOST_TEST(read_text_features(long_one).complexity <= 1.0f);
}

BOOST_AUTO_TEST_CASE(phrases_are_found_up_to_the_last_byte) {
  BOOST_TEST(read_text_features("The price is 5$").task_type == "math");
  BOOST_TEST(read_text_features("Here is a crossword clue").task_type == "reasoning");
  BOOST_TEST(read_text_features("Here is a crossword clu").task_type == "chat");
}

BOOST_AUTO_TEST_CASE(long_requests_are_read_by_their_edges_with_their_full_length) {
  std::string text = "Write a Python function that parses the log below.";
  for (int i = 0; i < 200; ++i) text += " filler line number " + std::to_string(i);
  text += " Which lines are errors?";

  std::string pruned = "left over from an earlier request";
  const auto words = prune_request_into(text, 8, 0, pruned);
  BOOST_TEST(words == 9u + 200u * 4u + 4u);
  BOOST_TEST(pruned == "Write a Python function that parses the log ... filler line number 199 Which lines are errors?");
  // Complexity sees the whole length, the rules the edges.
  const auto read = read_request_features(text, 8);
  BOOST_TEST(read.task_type == "coding");
  BOOST_TEST(read.complexity == read_text_features(pruned, words).complexity);
  BOOST_TEST(read.complexity > read_text_features(pruned).complexity);

  // A short request is kept whole, in the same buffer.
  BOOST_TEST(prune_request_into("just a few words", 8, 0, pruned) == 4u);
  BOOST_TEST(pruned == "just a few words");
}

BOOST_AUTO_TEST_CASE(without_examples_the_text_rules_decide) {
  const local_analyser analyser;
  const auto task = analyser.analyse("Write a Python function that sorts a list");
  BOOST_TEST(task.task_type == "coding");
  BOOST_TEST(task.evidence.empty());
}

BOOST_AUTO_TEST_CASE(similar_labelled_examples_outvote_the_text_rules) {
  local_analyser analyser;
  const auto examples = support_tickets();
  analyser.learn(examples);
  BOOST_TEST(analyser.size() == 6u);

  const auto billing = analyser.analyse("I see a double charge on my invoice");
  BOOST_TEST(billing.task_type == "billing");
  BOOST_TEST(billing.domain == "support");
  const auto bug = analyser.analyse("The app crashes on photo upload");
  BOOST_TEST(bug.task_type == "bug_report");
  BOOST_TEST(bug.complexity > billing.complexity);

  // Nothing alike: the text rules stand.
  const auto unrelated = analyser.analyse("Translate 'thank you' into German");
  BOOST_TEST(unrelated.task_type == "translation");
  BOOST_TEST(unrelated.evidence.empty());
}

BOOST_AUTO_TEST_CASE(evidence_says_how_models_did_on_similar_requests) {
  local_analyser analyser;
  analyser.learn(support_tickets());
  const auto bug = analyser.analyse("The app crashes when uploading a photo");
  const auto* small = evidence_for(bug, "small");
  const auto* large = evidence_for(bug, "large");
  BOOST_TEST_REQUIRE(small);
  BOOST_TEST_REQUIRE(large);
  BOOST_TEST(small->mean_score < 0.5f);
  BOOST_TEST(large->mean_score == 1.0f);
  BOOST_TEST(small->weight > 0.0f);
}

BOOST_AUTO_TEST_CASE(works_with_an_hnsw_index) {
  llmgate::basic_local_analyser<llmgate::hashing_embedder, llmgate::hnsw_index<>> analyser;
  analyser.learn(support_tickets());
  BOOST_TEST(analyser.analyse("Refund my double charge").task_type == "billing");
}

BOOST_AUTO_TEST_CASE(a_narrow_hnsw_search_finds_the_neighbours_that_count) {
  // Many unrelated examples around the tickets: an HNSW analyser searching
  // with breadth 16, or with breadth 8 for 8 neighbours from similarity 0.5
  // (route_eval's validated settings), still weighs the same neighbours as
  // an exact scan, since only close ones count.
  auto examples = support_tickets();
  const char* words[] = {"garden", "river", "piano", "orbit", "ladder", "copper", "meadow", "violin",
                         "harbor", "glacier", "lantern", "pepper", "canyon", "falcon", "saddle", "marble"};
  for (unsigned i = 0; i < 600; ++i) {
    std::string text;
    for (unsigned w = 0; w < 8; ++w) text += std::string(words[(i * 7 + w * 5 + i / 16) % 16]) + " ";
    examples.push_back({text + std::to_string(i), "other", "misc", 0.5f, {{"small", 0.5f}, {"large", 0.5f}}});
  }
  llmgate::local_analyser_options wide, narrowest;
  wide.search_breadth = 16;
  narrowest.min_similarity = 0.5f;
  narrowest.neighbours = 8;
  narrowest.search_breadth = 8;
  for (const auto& options : {wide, narrowest}) {
    local_analyser exact(options);
    llmgate::basic_local_analyser<llmgate::hashing_embedder, llmgate::hnsw_index<>> narrow(options);
    exact.learn(examples);
    narrow.learn(examples);
    for (const auto* request : {"I was charged twice on my invoice last month", "Uploading a photo makes the app crash each time"}) {
      BOOST_TEST_CONTEXT(request << ", breadth " << options.search_breadth) {
        const auto a = exact.analyse(request), b = narrow.analyse(request);
        BOOST_TEST(a.task_type == b.task_type);
        for (const auto* model : {"small", "large"}) {
          const auto* x = evidence_for(a, model);
          const auto* y = evidence_for(b, model);
          BOOST_TEST_REQUIRE(x);
          BOOST_TEST_REQUIRE(y);
          BOOST_TEST(x->weight == y->weight, boost::test_tools::tolerance(0.01f));
          BOOST_TEST(x->mean_score == y->mean_score, boost::test_tools::tolerance(0.01f));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
